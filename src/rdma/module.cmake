# rdma: the verbs RC transport links libibverbs (rdma-core), as reg's verbs
# backend does (added once). Without a device everything builds;
# rdma_md_open returns LOCUS_ERR_NO_DEVICE and the tests skip.
if(NOT ibverbs IN_LIST LOCUS_EXTRA_LIBS)
  list(APPEND LOCUS_EXTRA_LIBS ibverbs)
  set(LOCUS_PC_LIBS_PRIVATE "${LOCUS_PC_LIBS_PRIVATE} -libverbs")
endif()
