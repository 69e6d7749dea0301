// Shared heaps: a heap backed by a named object that other processes map
// (locus_heap_attach), its name's lifetime (O_EXCL, unlink, nothing left in
// /dev/shm), the page kind on shared memory, a small /dev/shm failing at create,
// reserve (fallocated at create, zeroed and mapped at the first touch).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <csignal>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

extern "C" {
#include <locus/heap.h>
#include <locus/topo.h>
}

static const uint64_t MiB = 1ull << 20;

static bool has(const char *hay, const char *needle) { return std::strstr(hay, needle) != nullptr; }

static bool exists(const std::string &p)
{
    struct stat sb;
    return stat(p.c_str(), &sb) == 0;
}

// Another process attaches `path`, writes i * mul at every 511th word of
// the first 16 MiB and exits; true if it did and `mine` sees every word.
static bool another_process_writes(const std::string &path, void *mine, uint64_t mul)
{
    pid_t pid = fork();
    if (pid == 0) {
        void *b = nullptr;
        if (locus_heap_attach(path.c_str(), 16 * MiB, &b))
            _exit(1);
        for (uint64_t i = 0; i < 16 * MiB / 8; i += 511)
            static_cast<uint64_t *>(b)[i] = i * mul;
        locus_heap_detach(b, 16 * MiB);
        _exit(0);
    }
    int ws;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        return false;
    for (uint64_t i = 0; i < 16 * MiB / 8; i += 511)
        if (static_cast<uint64_t *>(mine)[i] != i * mul)
            return false;
    return true;
}

class HeapShare : public ::testing::Test {
protected:
    void SetUp() override
    {
        for (const char *v : {"SIZE", "PROCS", "POLICY", "PAGES", "THREADS", "VERIFY", "CHUNK", "SAMPLES", "POPULATE"})
            unsetenv((std::string("LOCUS_HEAP_") + v).c_str());
        locus_heap_attr_init(&a);
        a.size = 16 * MiB;
        a.pages = LOCUS_PAGES_4K;
        a.verify = LOCUS_VERIFY_ALL;
        name = "locus-test-" + std::to_string(getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
        a.share_name = name.c_str();
        path = "/dev/shm/" + name;
    }
    void TearDown() override { unlink(path.c_str()); }
    locus_heap_attr_t a;
    std::string name, path;
};

TEST_F(HeapShare, ObjectIsPrivateSizedPlacedAndGoneAfterDestroy)
{
    a.populate = LOCUS_POPULATE_EAGER; // the fault-in maps every page, so move_pages finds each one
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(std::string(locus_heap_share_path(h)), path);
    struct stat sb;
    ASSERT_EQ(stat(path.c_str(), &sb), 0);
    EXPECT_EQ(sb.st_mode & 0777, 0600u);
    EXPECT_EQ((uint64_t)sb.st_size, 16 * MiB);
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_EQ(s.populate, LOCUS_POPULATE_EAGER);
    EXPECT_EQ(s.resident_bytes, 16 * MiB) << "the parallel fault-in allocated every page";
    EXPECT_EQ(s.units_checked, s.units_total);
    uint64_t placed = 0;
    for (int i = 0; i < s.num_nodes; i++)
        placed += s.node_units[i];
    EXPECT_EQ(placed, s.units_total) << "move_pages found every shared page on a node";
    locus_heap_destroy(h);
    EXPECT_FALSE(exists(path)) << "destroy unlinks a name still there";
}

// A shared heap's base is aligned like a private one's (the object is mapped
// over the aligned reservation).
TEST_F(HeapShare, BaseAlignedToThePowerOfTwoBelowTheSize)
{
    a.size = 24 * MiB;
    a.verify = LOCUS_VERIFY_NONE;
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    EXPECT_EQ((uintptr_t)locus_heap_base(h) % (16 * MiB), 0u) << locus_heap_base(h);
    locus_heap_destroy(h);
}

TEST_F(HeapShare, AttachSeesTheSameBytesAndSurvivesUnlink)
{
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    void *peer = nullptr;
    ASSERT_EQ(locus_heap_attach(path.c_str(), locus_heap_size(h), &peer), LOCUS_OK) << locus_last_error();
    EXPECT_NE(peer, locus_heap_base(h));
    ASSERT_EQ(locus_heap_unlink(h), LOCUS_OK);
    EXPECT_FALSE(exists(path));
    EXPECT_EQ(locus_heap_unlink(h), LOCUS_OK) << "idempotent";
    char *mine = static_cast<char *>(locus_heap_base(h)), *theirs = static_cast<char *>(peer);
    for (uint64_t off = 0; off < 16 * MiB; off += 4096 + 8)
        mine[off] = static_cast<char>(off * 7 + 1);
    for (uint64_t off = 0; off < 16 * MiB; off += 4096 + 8)
        ASSERT_EQ(theirs[off], static_cast<char>(off * 7 + 1)) << off;
    theirs[12345] = 42;
    EXPECT_EQ(mine[12345], 42);
    // a bare name means /dev/shm; it is gone now
    void *again = nullptr;
    EXPECT_EQ(locus_heap_attach(name.c_str(), 16 * MiB, &again), LOCUS_ERR_NOT_FOUND);
    EXPECT_TRUE(has(locus_last_error(), path.c_str())) << locus_last_error();
    locus_heap_detach(peer, 16 * MiB);
    locus_heap_destroy(h);
}

TEST_F(HeapShare, ForkedProcessWritesThroughItsOwnMapping)
{
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    EXPECT_TRUE(another_process_writes(locus_heap_share_path(h), locus_heap_base(h), 3));
    locus_heap_destroy(h);
}

TEST_F(HeapShare, NameTakenWrongSizeAndBadNamesAreRefused)
{
    locus_heap_t *h, *h2 = reinterpret_cast<locus_heap_t *>(0x1);
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    EXPECT_EQ(locus_heap_create(&a, nullptr, &h2), LOCUS_ERR_BUSY);
    EXPECT_TRUE(has(locus_last_error(), path.c_str())) << locus_last_error();
    EXPECT_EQ(h2, reinterpret_cast<locus_heap_t *>(0x1));
    EXPECT_TRUE(exists(path)) << "the refused create must not unlink the owner's name";
    void *b = nullptr;
    EXPECT_EQ(locus_heap_attach(path.c_str(), 8 * MiB, &b), LOCUS_ERR_INVALID);
    EXPECT_TRUE(has(locus_last_error(), "expected 8388608")) << locus_last_error();
    locus_heap_destroy(h);
    for (const char *bad : {"", "a/b", "..", "x y", "\xc3\xa9"}) {
        a.share_name = bad;
        EXPECT_EQ(locus_heap_create(&a, nullptr, &h2), LOCUS_ERR_INVALID) << bad;
        EXPECT_TRUE(has(locus_last_error(), "[A-Za-z0-9_.-]")) << locus_last_error();
    }
    EXPECT_EQ(locus_heap_attach(nullptr, 1, &b), LOCUS_ERR_INVALID);
    EXPECT_EQ(locus_heap_attach(path.c_str(), 0, &b), LOCUS_ERR_INVALID);
}

static bool shmem_thp_refused()
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
    char line[256] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    return !f || has(line, "[never]") || has(line, "[deny]");
}

// Where the system refuses shared THP: without the private tmpfs, auto
// takes 4k and says why, and thp is refused; with it (the default), auto and
// thp get huge pages from a tmpfs of their own, or auto says why not.
TEST_F(HeapShare, AutoPagesFollowShmemEnabled)
{
    bool never = shmem_thp_refused();
    a.pages = LOCUS_PAGES_AUTO;
    a.size = 8 * MiB;
    a.private_tmpfs = false;
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    if (never) {
        EXPECT_EQ(s.pages, LOCUS_PAGES_4K);
        EXPECT_TRUE(has(s.notes, "shmem_enabled")) << s.notes;
        EXPECT_EQ(s.populate, LOCUS_POPULATE_EAGER) << "auto faults 4 KiB shared pages in: " << s.notes;
    } else {
        EXPECT_EQ(s.pages, LOCUS_PAGES_THP);
    }
    locus_heap_destroy(h);
    if (never) {
        a.pages = LOCUS_PAGES_THP;
        EXPECT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_ERR_UNSUPPORTED);
        EXPECT_TRUE(has(locus_last_error(), "shmem_enabled")) << locus_last_error();
        EXPECT_FALSE(exists(path));
        a.pages = LOCUS_PAGES_AUTO;
        a.private_tmpfs = true;
        ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
        ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
        if (s.pages == LOCUS_PAGES_THP)
            EXPECT_TRUE(has(s.notes, "private huge tmpfs")) << s.notes;
        else
            EXPECT_TRUE(has(s.notes, "4k on /dev/shm after all")) << s.notes;
        locus_heap_destroy(h);
    }
}

static int sigchld_seen;
static void on_sigchld(int) { sigchld_seen++; }

// The private huge tmpfs: every page a huge page, no /dev/shm name, another
// process reaches it through /proc/<pid>/fd/<n> until unlink (then that path
// is gone and the mappings live on), and the helper process never signals
// the program (a SIGCHLD handler of its own sees nothing).
TEST_F(HeapShare, PrivateHugeTmpfsIsSharedHugeAndLeavesNothing)
{
    if (!shmem_thp_refused())
        GTEST_SKIP() << "shmem_enabled allows shared THP here: the system's tmpfs is used, not a private one";
    a.pages = LOCUS_PAGES_THP;
    a.size = 16 * MiB;
    a.private_tmpfs = true;
    a.populate = LOCUS_POPULATE_EAGER; // huge pages mapped at create
    struct sigaction sa = {}, old;
    sa.sa_handler = on_sigchld;
    sigaction(SIGCHLD, &sa, &old);
    sigchld_seen = 0;
    locus_heap_t *h;
    locus_status_t st = locus_heap_create(&a, nullptr, &h);
    sigaction(SIGCHLD, &old, nullptr);
    if (st == LOCUS_ERR_UNSUPPORTED && has(locus_last_error(), "namespace"))
        GTEST_SKIP() << "no namespaces for the helper here: " << locus_last_error();
    ASSERT_EQ(st, LOCUS_OK) << locus_last_error();
    EXPECT_EQ(sigchld_seen, 0) << "the helper's exit reached the program";
    std::string p = locus_heap_share_path(h);
    EXPECT_EQ(p.rfind("/proc/" + std::to_string(getpid()) + "/fd/", 0), 0u) << p;
    EXPECT_FALSE(exists(path)) << "nothing in /dev/shm";
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_EQ(s.pages, LOCUS_PAGES_THP);
    EXPECT_EQ(s.huge_bytes, 16 * MiB) << s.notes;
    EXPECT_TRUE(another_process_writes(p, locus_heap_base(h), 5)) << "through " << p;
    void *peer = nullptr;
    ASSERT_EQ(locus_heap_attach(p.c_str(), 16 * MiB, &peer), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_heap_unlink(h), LOCUS_OK);
    void *late = nullptr;
    EXPECT_NE(locus_heap_attach(p.c_str(), 16 * MiB, &late), LOCUS_OK) << "the path went with unlink";
    static_cast<char *>(peer)[777] = 9;
    EXPECT_EQ(static_cast<char *>(locus_heap_base(h))[777], 9) << "mappings outlive the path";
    locus_heap_detach(peer, 16 * MiB);
    locus_heap_destroy(h);
}

// The same for a process that is not root: the helper enters a user
// namespace of its own to mount the tmpfs.
TEST_F(HeapShare, PrivateHugeTmpfsWithoutRoot)
{
    if (!shmem_thp_refused())
        GTEST_SKIP() << "shmem_enabled allows shared THP here";
    if (geteuid() != 0)
        GTEST_SKIP() << "runs as root and drops to nobody (this run is not root: the test above covered it)";
    pid_t pid = fork();
    if (pid == 0) {
        if (setgroups(0, nullptr) || setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
            _exit(10);
        // as a program started by nobody would be (changing ids clears it)
        prctl(PR_SET_DUMPABLE, 1);
        a.pages = LOCUS_PAGES_THP;
        a.size = 8 * MiB;
        a.private_tmpfs = true;
        a.populate = LOCUS_POPULATE_EAGER;
        locus_heap_t *h;
        locus_status_t st = locus_heap_create(&a, nullptr, &h);
        if (st == LOCUS_ERR_UNSUPPORTED && has(locus_last_error(), "user namespace")) {
            fprintf(stderr, "%s\n", locus_last_error());
            _exit(77);
        }
        if (st)
            _exit(11);
        locus_heap_stats_t s;
        locus_heap_stats(h, &s);
        _exit(s.huge_bytes == 8 * MiB ? 0 : 12);
    }
    int ws;
    ASSERT_EQ(waitpid(pid, &ws, 0), pid);
    ASSERT_TRUE(WIFEXITED(ws));
    if (WEXITSTATUS(ws) == 77)
        GTEST_SKIP() << "unprivileged user namespaces are off here (kernel.unprivileged_userns_clone, "
                        "user.max_user_namespaces or a security module)";
    EXPECT_EQ(WEXITSTATUS(ws), 0) << "10: dropping to nobody, 11: create failed, 12: not huge";
}

TEST_F(HeapShare, FirstTouchSharedHeapIsAllocatedAtCreate)
{
    a.policy = LOCUS_HEAP_FIRSTTOUCH;
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    struct stat sb;
    ASSERT_EQ(stat(path.c_str(), &sb), 0);
    EXPECT_EQ((uint64_t)sb.st_blocks * 512, 16 * MiB) << "posix_fallocate reserved the object";
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_TRUE(has(s.notes, "allocated at create by fallocate")) << s.notes;
    locus_heap_destroy(h);
}

// Runs create in a child with a private /dev/shm of 4 MiB (a container's is
// 64 MiB): "status|message|leftover", leftover "clean" if no name and no
// allocated block is left. Needs a private mount namespace (root or user
// namespaces): false to skip.
static bool create_on_small_dev_shm(const locus_heap_attr_t &a, const std::string &path, std::string &out)
{
    int fds[2];
    if (pipe(fds) != 0)
        return false;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        char msg[700] = "";
        int code = 77;
        if (unshare(CLONE_NEWNS) == 0 && mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
            mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=4M") == 0) {
            locus_heap_t *h = nullptr;
            locus_status_t st = locus_heap_create(&a, nullptr, &h);
            struct statvfs v;
            bool clean = !h && !exists(path) && statvfs("/dev/shm", &v) == 0 && v.f_bfree == v.f_blocks;
            snprintf(msg, sizeof msg, "%d|%s|%s", (int)st, locus_last_error(), clean ? "clean" : "left");
            code = 0;
        }
        if (write(fds[1], msg, strlen(msg)) < 0)
            code = 2;
        _exit(code);
    }
    close(fds[1]);
    char buf[700] = "";
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    close(fds[0]);
    int ws;
    if (waitpid(pid, &ws, 0) != pid || !WIFEXITED(ws) || WEXITSTATUS(ws) == 77)
        return false;
    out = buf;
    return true;
}

// Reserve: the object is allocated at create (its blocks cover the heap) but
// nothing is mapped or zeroed yet (no resident byte; the placement check is
// deferred, not faked); it reads back zero, another process sees our writes,
// and once touched the placement check finds every page.
TEST_F(HeapShare, ReserveAllocatesAtCreateAndMapsAtFirstTouch)
{
    a.populate = LOCUS_POPULATE_RESERVE;
    locus_heap_t *h;
    ASSERT_EQ(locus_heap_create(&a, nullptr, &h), LOCUS_OK) << locus_last_error();
    struct stat sb;
    ASSERT_EQ(stat(path.c_str(), &sb), 0);
    EXPECT_EQ((uint64_t)sb.st_blocks * 512, 16 * MiB) << "fallocate allocated the whole object";
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_EQ(s.populate, LOCUS_POPULATE_RESERVE);
    EXPECT_EQ(s.resident_bytes, 0u) << "nothing faulted in (smaps Rss of the heap)";
    EXPECT_EQ(s.units_checked, 0u);
    EXPECT_TRUE(has(s.notes, "verify all deferred")) << s.notes;
    const uint64_t *w = static_cast<const uint64_t *>(locus_heap_base(h));
    uint64_t nonzero = 0;
    for (uint64_t i = 0; i < 16 * MiB / 8; i++)
        nonzero += w[i] != 0;
    EXPECT_EQ(nonzero, 0u) << "a fallocated page reads back zero";
    EXPECT_TRUE(another_process_writes(path, locus_heap_base(h), 7));
    ASSERT_EQ(locus_heap_verify(h, LOCUS_VERIFY_ALL), LOCUS_OK) << locus_last_error();
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    uint64_t placed = 0;
    for (int i = 0; i < s.num_nodes; i++)
        placed += s.node_units[i];
    EXPECT_EQ(placed, s.units_total) << "touched, every page is on a node";
    EXPECT_FALSE(has(s.notes, "deferred")) << s.notes;
    locus_heap_destroy(h);
}

// The OpenSHMEM heap's kind (private huge tmpfs, interleave, populate auto):
// reserved at create, and the pages its first touch maps are huge pages
// (fallocate allocated huge folios on the huge=always mount).
TEST_F(HeapShare, PrivateHugeTmpfsIsReservedByDefaultAndHugeAtFirstTouch)
{
    if (!shmem_thp_refused())
        GTEST_SKIP() << "shmem_enabled allows shared THP here: the system's tmpfs is used, not a private one";
    a.pages = LOCUS_PAGES_THP;
    a.private_tmpfs = true;
    locus_heap_t *h;
    locus_status_t st = locus_heap_create(&a, nullptr, &h);
    if (st == LOCUS_ERR_UNSUPPORTED && has(locus_last_error(), "namespace"))
        GTEST_SKIP() << "no namespaces for the helper here: " << locus_last_error();
    ASSERT_EQ(st, LOCUS_OK) << locus_last_error();
    struct stat sb;
    ASSERT_EQ(stat(locus_heap_share_path(h), &sb), 0);
    EXPECT_EQ((uint64_t)sb.st_blocks * 512, 16 * MiB) << "fallocate allocated the whole object";
    locus_heap_stats_t s;
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_EQ(s.populate, LOCUS_POPULATE_RESERVE) << s.notes;
    EXPECT_TRUE(has(s.notes, "auto: populate reserve")) << s.notes;
    EXPECT_EQ(s.resident_bytes, 0u);
    memset(locus_heap_base(h), 3, 16 * MiB);
    ASSERT_EQ(locus_heap_verify(h, LOCUS_VERIFY_NONE), LOCUS_OK);
    ASSERT_EQ(locus_heap_stats(h, &s), LOCUS_OK);
    EXPECT_EQ(s.resident_bytes, 16 * MiB);
    EXPECT_EQ(s.huge_bytes, 16 * MiB) << s.notes;
    locus_heap_destroy(h);
}

// Reserve short of room: fallocate fails at create with a clear status and
// message (not a SIGBUS at the first touch), and nothing is left: no name,
// no allocated block.
TEST_F(HeapShare, ReserveShortOfRoomFailsAtCreateLeavingNothing)
{
    a.populate = LOCUS_POPULATE_RESERVE;
    std::string out;
    if (!create_on_small_dev_shm(a, path, out))
        GTEST_SKIP() << "no private mount namespace here";
    EXPECT_EQ(out.substr(0, out.find('|')), std::to_string(LOCUS_ERR_NO_MEMORY)) << out;
    EXPECT_TRUE(has(out.c_str(), "allocating it (fallocate): /dev/shm has only")) << out;
    EXPECT_TRUE(has(out.c_str(), "|clean")) << out;
}

// A /dev/shm smaller than the heap (a container's 64 MiB default) fails at
// create, naming the file system, and leaves nothing behind: eager checks
// the room before its fault-in.
TEST_F(HeapShare, SmallDevShmFailsAtCreate)
{
    a.populate = LOCUS_POPULATE_EAGER;
    std::string out;
    if (!create_on_small_dev_shm(a, path, out))
        GTEST_SKIP() << "no private mount namespace here";
    EXPECT_EQ(out.substr(0, out.find('|')), std::to_string(LOCUS_ERR_NO_MEMORY)) << out;
    EXPECT_TRUE(has(out.c_str(), "MiB: /dev/shm has only")) << out;
    EXPECT_TRUE(has(out.c_str(), "|clean")) << out;
}
