import random

import torch

import compiler

EXPECT = "cache.miss"


def warm(x):
    return (x.sin() + 1).relu()


def changed(x):
    return (x.sin() + 1).relu()


def driver(x):
    torch.compile(warm)(x)  # cached by the run before: a hit
    # a setting that is part of the FX graph cache key, changed since the cached run
    # (a value no earlier run used, so the miss does not depend on what is on disk)
    with torch._inductor.config.patch(max_fusion_size=random.randint(10**6, 10**9)):
        torch.compile(changed)(x)


def run():
    x = torch.randn(32)
    compiler.explore(warm, x, keep_caches=True)  # the earlier run that filled the cache
    return compiler.explore(driver, x, keep_caches=True, wrap=False)
