// The rule by which `locus tune` replaces a default (tools/tune_pick.h), on
// made-up figures: a clear win is taken, a win inside the noise, a loss at
// any size, a loaded machine's figures and missing figures are not.
#include <gtest/gtest.h>

#include <vector>

#include "../../tools/tune_pick.h"

namespace {

tune_cmp_t cmp(const std::vector<tune_fig_t> &c, const std::vector<tune_fig_t> &d)
{
    return tune_compare(c.data(), d.data(), (int)c.size());
}

} // namespace

TEST(TunePick, FigureIsTheMedianAndItsRelativeSpread)
{
    double x[] = {10, 12, 8, 10, 30};
    tune_fig_t f = tune_figure(x, 5);
    EXPECT_DOUBLE_EQ(f.med, 10);
    EXPECT_DOUBLE_EQ(f.noise, 0.1); // 8 and 30 left out: 10..12 -> half range 1
    double y[] = {0, 4, 0, 6}; // failed rounds (0) are left out; under 5: the whole range
    f = tune_figure(y, 4);
    EXPECT_DOUBLE_EQ(f.med, 5);
    EXPECT_DOUBLE_EQ(f.noise, 0.2);
    double z[] = {10, 10.1, 9.9, 10, 10.2, 9.8, 10, 10, 40}; // one preempted round
    EXPECT_NEAR(tune_figure(z, 9).noise, 0.015, 1e-12); // 9.9..10.2 without 9.8 and 40
    double none[] = {0, 0};
    EXPECT_EQ(tune_figure(none, 2).med, 0);
}

TEST(TunePick, AClearWinIsTaken)
{
    auto r = cmp({{11, 0.01}, {22, 0.01}}, {{10, 0.01}, {20, 0.01}});
    EXPECT_EQ(r.n, 2);
    EXPECT_NEAR(r.gain, 1.1, 1e-9);
    EXPECT_DOUBLE_EQ(r.margin, TUNE_NOISE_MIN); // 2 % of spread: the 3 % floor
    EXPECT_TRUE(tune_beats(&r));
}

TEST(TunePick, AWinInsideTheNoiseIsNot)
{
    auto r = cmp({{11, 0.06}, {22, 0.01}}, {{10, 0.06}, {20, 0.01}});
    EXPECT_NEAR(r.margin, 0.12, 1e-9);
    EXPECT_FALSE(tune_beats(&r));
    r = cmp({{10.2, 0}}, {{10, 0}}); // 2 %: below the floor
    EXPECT_FALSE(tune_beats(&r));
}

TEST(TunePick, ALossAtAnySizeIsNot)
{
    // +40 % at one size, -20 % at the other: the mean gains, one size loses
    auto r = cmp({{14, 0.01}, {16, 0.01}}, {{10, 0.01}, {20, 0.01}});
    EXPECT_GT(r.gain, 1.05);
    EXPECT_NEAR(r.worst, 0.8, 1e-9);
    EXPECT_FALSE(tune_beats(&r));
}

TEST(TunePick, ALoadedMachineChoosesNothing)
{
    auto r = cmp({{30, 0.2}}, {{10, 0.1}}); // 3x, but the runs spread 30 %
    EXPECT_NEAR(r.gain, 3, 1e-9);
    EXPECT_FALSE(tune_beats(&r));
}

TEST(TunePick, NothingToCompareIsNoWin)
{
    auto r = cmp({}, {});
    EXPECT_EQ(r.n, 0);
    EXPECT_FALSE(tune_beats(&r));
    r = cmp({{0, 1}}, {{10, 0}}); // a candidate that never ran
    EXPECT_EQ(r.n, 0);
    EXPECT_FALSE(tune_beats(&r));
}
