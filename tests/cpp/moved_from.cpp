// moved_from: a moved-from object of the C++ wrapper fails cleanly, never
// reading what its new owner freed. Run by bindings/ci.sh under the mock
// (tests/bindings/with-mock.sh): the traces come from its flowtrace.
#include "hydroplot.hpp"

#include <cstdio>
#include <utility>

static int failures = 0;

#define EXPECT(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);       \
            ++failures;                                                       \
        }                                                                     \
    } while (0)

/** Whether `f` throws hydroplot::error with HYDROPLOT_ERR_NULL_ARGUMENT. */
template <class F> static bool throws_null_argument(F f) {
    try {
        f();
    } catch (const hydroplot::error &e) {
        return e.status() == HYDROPLOT_ERR_NULL_ARGUMENT;
    }
    return false;
}

static hydroplot::trace a_trace(const hydroplot::context &ctx) {
    return hydroplot::raindrop_trace(ctx, -89.2158, 42.9561, std::nullopt, "up");
}

int main() try {
    hydroplot::context ctx;

    // A trace moved into another, which then frees it: the first views nothing.
    hydroplot::trace first = a_trace(ctx);
    EXPECT(first.size() == 2);
    {
        hydroplot::trace second = std::move(first);
        EXPECT(second.size() == 2 && second.id(0) == "upstreamFlowline");
    }
    EXPECT(first.size() == 0 && first.id(0).empty() && first.coords(0).empty());
    EXPECT(throws_null_argument([&] { first.bbox(); }));
    // Move-assigned: the target owns the trace, the source views nothing.
    hydroplot::trace third = a_trace(ctx);
    first = std::move(third);
    EXPECT(first.size() == 2 && third.size() == 0);
    first = std::move(first);  // onto itself: kept
    EXPECT(first.size() == 2);

    // A map moved from is no map to draw onto: an error, not a new map.
    hydroplot::map m = hydroplot::map::create(ctx, {-89.5, 42.9, -89.2, 43.1}, std::nullopt, 64, 48, std::string("none"));
    hydroplot::map kept = std::move(m);
    hydroplot::plot_request req;
    req.add_comid(13293970);
    EXPECT(throws_null_argument([&] { hydroplot::plot(ctx, req, &m); }));
    EXPECT(throws_null_argument([&] { m.write_png("never.png"); }));

    // A context moved from cancels nothing (and does not crash); a cancel
    // reaches the calls running, so the calls after it run.
    hydroplot::context moved = std::move(ctx);
    ctx.cancel();
    moved.cancel();
    EXPECT(a_trace(moved).size() == 2);

    std::printf("c++ moved-from: %d failures\n", failures);
    return failures != 0;
} catch (const hydroplot::error &e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
}
