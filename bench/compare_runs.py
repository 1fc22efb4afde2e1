#!/usr/bin/env python3
"""Before/after table of two or more vkc_bench runs made in one call on one card.

    compare_runs.py BASE1/vkc.json[,BASE2/vkc.json...] NEW1/vkc.json[,NEW2/vkc.json...] [--limit 1.03]

Each side's time per case is the median over that side's runs of the per-run medians (runs
alternate base, new, base, new, so a clock drift shows in both). Prints a Markdown table with the
ratio new / base and flags a case slower than --limit; exits 0 either way (it reports, it does not
judge). Needs only the standard library.
"""
import json
import statistics
import sys


def load(paths):
    runs = [json.load(open(p)) for p in paths.split(",")]
    times, strategies = {}, {}
    for run in runs:
        for case in run.get("cases", []):
            if "vkc" not in case:
                continue
            times.setdefault(case["name"], []).append(case["vkc"]["median_ms"])
            strategies[case["name"]] = " + ".join(
                f'{d["kernel"]} ({d["strategy"]})' for d in case.get("dispatches", []))
    return runs[0], {name: statistics.median(t) for name, t in times.items()}, strategies


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    limit = 1.03
    if "--limit" in sys.argv:
        limit = float(sys.argv[sys.argv.index("--limit") + 1])
        args.remove(str(sys.argv[sys.argv.index("--limit") + 1]))
    base_run, base, base_s = load(args[0])
    _, new, new_s = load(args[1])
    print(f"device {base_run.get('device')}, driver {base_run.get('driver')}; "
          f"{len(args[0].split(','))} base and {len(args[1].split(','))} new runs, alternating\n")
    print("| case | base ms | new ms | new / base | |")
    print("| --- | ---: | ---: | ---: | --- |")
    slower = 0
    for name in base:
        if name not in new:
            print(f"| {name} | {base[name]:.3f} | - | - | missing in new |")
            continue
        r = new[name] / base[name]
        flag = f"SLOWER than {limit:.2f}x" if r > limit else ""
        slower += r > limit
        print(f"| {name} | {base[name]:.3f} | {new[name]:.3f} | {r:.3f} | {flag} |")
    print(f"\n{slower} case(s) slower than {limit:.2f}x")
    print("\nChanged plans:")
    for name in base:
        if base_s.get(name) != new_s.get(name):
            print(f"- {name}: {base_s.get(name)} -> {new_s.get(name)}")


if __name__ == "__main__":
    main()
