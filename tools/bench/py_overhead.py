#!/usr/bin/env python3
"""Per-call cost of switchyard's Python m.run on a 1-node graph (relu of a 1-element tensor),
against calling torch.relu directly. Not a test: run it by hand (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 tools/bench/py_overhead.py [--calls N] [--config FILE]
"""
import argparse
import statistics
import time

import torch

import switchyard


def per_call_us(fn, calls, rounds=7):
    """The median over `rounds` of the mean time per call, in microseconds."""
    for _ in range(calls // 10):
        fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20000, help="calls per round (default 20000)")
    parser.add_argument("--config", default=None, help="a config file (default: the built-in routing)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    rt = switchyard.Runtime(config=args.config, log_level="warn")
    m = rt.load(torch.nn.ReLU(), torch.randn(1))
    x = torch.randn(1)
    backend = m.plan(x)[0]["backend"]
    torch_us = per_call_us(lambda: torch.relu(x), args.calls)
    run_us = per_call_us(lambda: m.run(x), args.calls)
    io_us = per_call_us(lambda: m.run(x, node_io="outputs"), args.calls)
    print(f"1-node graph (aten::relu on [1], backend {backend}), {args.calls} calls x 7 rounds, median:")
    print(f"  torch.relu(x)                      {torch_us:7.2f} us per call")
    print(f"  m.run(x)                           {run_us:7.2f} us per call")
    print(f"  m.run(x, node_io='outputs')        {io_us:7.2f} us per call")
    print(f"  m.run overhead over torch.relu     {run_us - torch_us:7.2f} us per call (target < 20)")


if __name__ == "__main__":
    main()
