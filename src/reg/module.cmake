# reg: the verbs backend links libibverbs (rdma-core).
list(APPEND LOCUS_EXTRA_LIBS ibverbs)
set(LOCUS_PC_LIBS_PRIVATE "${LOCUS_PC_LIBS_PRIVATE} -libverbs")
