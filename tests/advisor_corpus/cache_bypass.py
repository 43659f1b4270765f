import torch

import compiler

EXPECT = "cache.bypass"


def count_nodes(graph):
    return len(graph.nodes)


def f(x):
    return (x.cos() * 3).sum()


def driver(x):
    # a custom pass given as a plain function: Inductor cannot hash it into the cache key
    with torch._inductor.config.patch(post_grad_custom_post_pass=count_nodes):
        return torch.compile(f)(x)


def run():
    return compiler.explore(driver, torch.randn(16), keep_caches=True, wrap=False)
