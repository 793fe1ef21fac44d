"""TorchScript profile nodes are left in the optimized graph.

Fault (simulated at the observation seam): the removal of profiling nodes is C++
(``RemoveProfileNodesAndSpecializeTypes`` in ``profiling_graph_executor_impl.cpp``) with
no Python knob on torch 2.13, so this plugin wraps ``torch._C._last_executed_optimized_graph``
(how the harness sees the executed graph) and, on a copy of every optimized graph (one
without the input-less ``prim::profile`` a profiling run carries), inserts a
``prim::profile`` on the first tensor input, as a pass that forgot to strip it would
leave it. Values are unchanged. Expected verdict: ``invariant`` with check
``no_profile_nodes`` (``aliasfuzz.oracle.ts_invariants``; the case format's
``wrong-profile``). Pipeline: ``torchscript``.
"""


def _is_profiling_graph(g):
    return any(n.kind() == "prim::profile" and n.inputsSize() == 0 for n in g.nodes())


def install(api):
    def make(original):
        def last_executed_optimized_graph():
            g = original()
            if g is None or _is_profiling_graph(g):
                return g
            g = g.copy()
            tensors = [v for v in g.inputs() if v.type().kind() == "TensorType"]
            first = next(iter(g.nodes()), None)
            if not tensors or first is None:
                return g
            node = g.create("prim::profile", [tensors[0]], 1)
            node.output().setType(tensors[0].type())
            node.insertBefore(first)
            tensors[0].replaceAllUsesAfterNodeWith(node, node.output())
            return g

        return last_executed_optimized_graph

    api.wrap("torch._C", "_last_executed_optimized_graph", make)
