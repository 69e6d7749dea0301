// C++ new/delete (scalar, array, aligned, sized), containers and
// std::thread under the profiler's preload shim. Deterministic output.
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

struct alignas(256) Block {
    double v[64];
};

static double work(int seed)
{
    std::vector<double> big(1 << 18);
    for (size_t i = 0; i < big.size(); i++)
        big[i] = (double)((i * (size_t)seed) % 97);
    std::map<int, std::string> m;
    for (int i = 0; i < 2000; i++)
        m[i] = std::to_string(i * seed);
    auto p = std::make_unique<Block[]>(1024);
    p[1023].v[63] = 1.0;
    double *raw = new double[100000];
    raw[99999] = 2.0;
    double s = raw[99999] + p[1023].v[63] + (double)m.size();
    delete[] raw;
    for (double x : big)
        s += x;
    return s;
}

int main()
{
    std::vector<std::thread> ts;
    std::vector<double> out(4);
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&out, i] { out[i] = work(i + 1); });
    for (auto &t : ts)
        t.join();
    for (int i = 0; i < 4; i++)
        std::printf("%d %.0f\n", i, out[i]);
    auto *b = new Block;
    delete b;
    return 0;
}
