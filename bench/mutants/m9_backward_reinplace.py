"""A reinplacing fault that only backward graphs see: an op overwrites a value a later op reads.

Fault (unsafe reinplace, backward graphs only): in every backward graph (one whose
placeholders include AOTAutograd's ``tangents_*``), the first ``aten.{add,sub,mul,div}.Tensor``
whose first argument is an intermediate value that a later node still reads becomes its
in-place form, as a reinplacing pass that forgot the later reader would make it. Forward
graphs are left alone, so outputs stay right and only gradients differ. It is applied where
each pipeline finishes its backward graph: after Inductor's reinplace pass
(``torch._inductor.fx_passes.post_grad.reinplace_inplaceable_ops``, which both ``inductor``
and the fast path run on forward and backward graphs alike) and in the nop compiler
``aot_eager`` hands its backward graph to (``torch._dynamo.backends.debugging.boxed_nop``,
looked up when the backend is called). Expected verdict: ``miscompile`` (check ``grads``).
Pipelines: ``aot_eager``, ``inductor-reinplace``, ``inductor``.
"""

_INPLACE = {"add": "add_", "sub": "sub_", "mul": "mul_", "div": "div_"}


def _is_backward(graph) -> bool:
    # AOTAutograd names the backward graph's incoming gradients tangents_<k>
    # (torch/_functorch/_aot_autograd/graph_capture_wrappers.py); forward graphs have none
    return any(n.op == "placeholder" and n.name.startswith("tangents") for n in graph.nodes)


def _reinplace_unsafely(graph) -> bool:
    import torch

    aten = torch.ops.aten
    order = {n: i for i, n in enumerate(graph.nodes)}
    for n in graph.nodes:
        if n.op != "call_function" or getattr(n.target, "_overloadname", None) != "Tensor":
            continue
        name = n.target._opname
        if name not in _INPLACE or not n.args or not isinstance(n.args[0], torch.fx.Node):
            continue
        a = n.args[0]
        va, vn = a.meta.get("val"), n.meta.get("val")
        if a.op != "call_function" or va is None or vn is None:
            continue
        if va.shape != vn.shape or va.dtype != vn.dtype:
            continue  # an in-place form must not broadcast or cast its self
        if not any(order[u] > order[n] for u in a.users if u is not n):
            continue  # no later reader: writing in place would be safe
        n.target = getattr(aten, _INPLACE[name]).Tensor
        return True
    return False


def install(api):
    def wrap_pass(orig):
        def reinplace_inplaceable_ops(fake_tensor_updater, graph):
            out = orig(fake_tensor_updater, graph)
            if _is_backward(graph):
                _reinplace_unsafely(graph)
            return out

        return reinplace_inplaceable_ops

    def wrap_nop(orig):
        def boxed_nop(gm, example_inputs):
            if _is_backward(gm.graph) and _reinplace_unsafely(gm.graph):
                gm.recompile()
            return orig(gm, example_inputs)

        return boxed_nop

    api.wrap("torch._inductor.fx_passes.post_grad", "reinplace_inplaceable_ops", wrap_pass)
    api.wrap("torch._dynamo.backends.debugging", "boxed_nop", wrap_nop)
