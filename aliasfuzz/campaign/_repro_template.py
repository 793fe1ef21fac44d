"""The Jinja2 template of ``repro.py`` (rendered by :func:`aliasfuzz.campaign.repro.render_repro`).

One template, four ways to run the program (``mode``): ``compile`` (``torch.compile``
with a public backend), ``fastpath`` (``torch.compile`` with Inductor stopped after its
post-grad passes: a harness), ``fx`` (``make_fx(functionalize(f))`` then
``torch.fx.passes.reinplace``) and ``jit`` (``torch.jit.script`` under the executor
settings the finding needs). ``check`` picks what is compared: ``crash`` (the compiled
call raises), ``copies`` (a missed reinplace: the copies the pass left, in bytes),
``aliasing`` / ``requires_grad`` (compared with ``==``), ``grads`` (the gradients of one
loss, ``grads(...)``, defined when ``backward`` is set: a gradient finding, whose crash
runs the backward too), or values through
``torch.testing.assert_close`` at its default tolerances (``want``/``got``: the eager and
compiled expressions). Single braces (Python f-string fields) are left alone by Jinja2.
"""

#: The lines that make a repro exit 125 on an exception outside its check (an API that
#: moved, an eager call that now raises, a value finding whose compiled call now raises):
#: neither "the bug shows" (1) nor "fixed" (0), and git bisect's "skip" code, so a script
#: bisecting torch with a repro does not read a broken repro as the bug (fresh user 31's
#: B3). ``os._exit``: an uncaught exception's status is 1 whatever ``sys.excepthook`` does.
#: A ``python`` without torch at all exits 2, a mistake of the set-up that the bisect recipe
#: of ``corpus/README.md`` stops on: as a "skip" every commit was skipped (fresh user 34's B5).
#: Without torch it says so in one line, not a traceback (fresh user 52's B4).
BROKE = [
    "import os, sys, traceback  # an exception outside the check exits 125: the repro broke",
    "sys.excepthook = lambda t, e, tb: ((no := isinstance(e, ModuleNotFoundError) and e.name == 'torch'), "
    "print(f'{sys.executable} has no torch: run this repro with the python of the torch under test', "
    "file=sys.stderr) if no else traceback.print_exception(t, e, tb), sys.stdout.flush(), sys.stderr.flush(), "
    "os._exit(2 if no else 125))",
]

TEMPLATE = r'''"""{{ title }}

{{ notes|join("\n") }}"""
{% if optional %}
from typing import Optional

{% endif %}
{% for line in broke %}
{{ line }}
{% endfor %}
import torch
{% if cuda %}

if not torch.cuda.is_available():
    print("CANNOT RUN HERE: needs a GPU")
    raise SystemExit(3)
{% endif %}
{% for line in imports %}
{{ line }}
{% endfor %}
{% for line in settings %}
{{ line }}
{% endfor %}
{% if definitions %}

{% for line in definitions %}
{{ line }}
{% endfor %}
{% endif %}

{% for line in function %}
{{ line }}
{% endfor %}

{% for line in inputs %}
{{ line }}
{% endfor %}
{% if mode == "fastpath" %}

def post_grad_only(gm, example_inputs, **kwargs):  # Inductor up to its post-grad passes
{% if backward %}
    with V.set_fake_mode(detect_fake_mode(example_inputs)):  # a lazily compiled backward needs it
        _recursive_post_grad_passes(gm, is_inference=bool(kwargs.get("is_inference")))
{% else %}
    _recursive_post_grad_passes(gm, is_inference=bool(kwargs.get("is_inference")))
{% endif %}
    for n in [n for n in gm.graph.nodes if n.target is operator.getitem and not n.users]:
        gm.graph.erase_node(n)  # Inductor never reads an output nobody uses
    gm.recompile()
    return make_boxed_func(gm.forward)  # run the post-grad graph instead of generated code
{% endif %}
{% if check == "aliasing" %}

def shares(outs, ins):  # for each output: the outputs and inputs on its storage
    ts = {**{f"out{i}": t for i, t in enumerate(outs or ())}, **dict(zip({{ names }}, ins))}
    ptr = {k: t.untyped_storage().data_ptr() for k, t in ts.items() if isinstance(t, torch.Tensor)}
    return {k: [j for j in ptr if j != k and ptr[j] == ptr[k] != 0] for k in ptr if k[:3] == "out"}

def changed_by_writes(outs, ins):  # each tensor written after the call -> the outputs that change
    ts = {**{f"out{i}": t for i, t in enumerate(outs or ())}, **dict(zip({{ names }}, ins))}
    seen = {}
    for k, x in ts.items():
        if isinstance(x, torch.Tensor) and x.numel() and not x.requires_grad:
            before = {j: t.clone() for j, t in ts.items() if j != k and j[:3] == "out" and isinstance(t, torch.Tensor)}
            try:
                x.logical_not_() if x.dtype == torch.bool else x.add_(1)
            except RuntimeError:  # a self-overlapping tensor refuses the write
                continue
            seen[k] = [j for j, u in before.items() if not torch.equal(ts[j], u)]
    return {k: v for k, v in seen.items() if v}
{% endif %}
{% if outside %}

def outside_views(a, b):  # storage elements that differ where no input's view reaches
    said, ptr = "", [x.untyped_storage().data_ptr() if isinstance(x, torch.Tensor) else None for x in a]
    for k, (x, y) in ((k, xy) for k, xy in enumerate(zip(a, b)) if ptr[k] is not None and ptr.index(ptr[k]) == k):
        fx, fy = (t.new_empty(0).set_(t.untyped_storage(), 0, (t.untyped_storage().nbytes() // t.element_size(),)).cpu() for t in (x, y))
        views = [torch.arange(len(fx)).as_strided(v.size(), v.stride(), v.storage_offset()).flatten() for j, v in enumerate(a) if ptr[j] == ptr[k]]
        reach = torch.zeros(len(fx), dtype=torch.bool).index_fill_(0, torch.cat(views), True)
        at = ((fx != fy) & ((fx == fx) | (fy == fy)) & ~reach).nonzero().flatten().tolist()[:8]
        said += f"\n  outside every input's view: {f.__code__.co_varnames[k]}'s storage, elements {at}: eager {fx[at].tolist()}, compiled {fy[at].tolist()}" * bool(at)
    return said
{% endif %}
{% if backward %}

def grads(outs, ins):  # d sum(o.sum()) over the floating outputs / d each input requiring grad
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    leaves = [t for t in ins if isinstance(t, torch.Tensor) and t.requires_grad]
    loss = sum(o.sum() for o in outs if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad)
    gs = torch.autograd.grad(loss, leaves, allow_unused=True)
    return [torch.zeros_like(t) if g is None else g for t, g in zip(leaves, gs)]
{% endif %}
{% if check == "copies" %}

def nbytes(n):  # bytes of a graph value (a tensor or a list of tensors)
    v = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
    return sum(t.numel() * t.element_size() for t in (v if isinstance(v, (list, tuple)) else [v])
               if isinstance(t, torch.Tensor))
{% if mode != "fx" %}

copies, ran, reinplace_pass = [], [], post_grad.reinplace_inplaceable_ops

def watched(updater, graph):  # Inductor's reinplace pass, then the copies it left
    ran.append(graph)
    before = set(graph.nodes)
    reinplace_pass(updater, graph)
    for n in graph.nodes:
{% for line in copy_rules %}
        {{ line }}
{% endfor %}

post_grad.reinplace_inplaceable_ops = watched  # post_grad_passes calls the pass by this name
{% endif %}
{% endif %}

{% if died > 1 %}
import subprocess
if "--child" not in sys.argv:  # it killed the fuzzer's process: run it in children, exit 1 on a signal
    for _ in range({{ died }}):  # a heap corruption does not abort every run
        r = subprocess.run([sys.executable, __file__, "--child"])
        if r.returncode:
            raise SystemExit(f"the process died of signal {-r.returncode}" if r.returncode < 0 else r.returncode)
    raise SystemExit(0)
{% elif died %}
import subprocess
if "--child" not in sys.argv:  # generated code may write out of bounds: a signal is the bug too
    r = subprocess.run([sys.executable, __file__, "--child"])
    raise SystemExit(f"the process died of signal {-r.returncode}" if r.returncode < 0 else r.returncode)
{% endif %}
{% if oob %}
from torch._inductor.codecache import PyCodeCache

load_wrapper, checked = PyCodeCache.load_by_key_path, []

def checked_wrapper(*args, **kwargs):  # each view Inductor's wrapper makes, against its storage
    mod = load_wrapper(*args, **kwargs)
    view = getattr(mod, "reinterpret_tensor", None)

    def reinterpret_tensor(base, size, stride, offset):  # offset: from base's own offset
        n, start = base.untyped_storage().nbytes() // base.element_size(), base.storage_offset() + offset
        lo = start + sum((k - 1) * s for k, s in zip(size, stride) if s < 0)
        hi = start + sum((k - 1) * s for k, s in zip(size, stride) if s > 0)
        if all(size) and (lo < 0 or hi >= n):  # before any kernel writes through it
            raise SystemExit(f"Inductor's wrapper made reinterpret_tensor(buf, {tuple(size)}, "
                             f"{tuple(stride)}, {offset}) of a storage of {n} elements: out of bounds")
        return view(base, size, stride, offset)

    if view is not None:
        mod.reinterpret_tensor = reinterpret_tensor
        checked.append(mod)
    return mod

PyCodeCache.load_by_key_path = checked_wrapper
{% endif %}
print("torch", torch.__version__{% if triton %}, "triton", triton.__version__{% endif %})
{% if mode == "jit" %}
scripted = {{ script }}
{% if frontend %}
print(scripted.graph)  # the graph TorchScript's frontend built, before any executor runs
{% endif %}
for call in range({{ calls }}):  # {{ calls_note }}
    a, b = inputs(), inputs()
{% if toggle %}
    if call % 2:  # as the campaign called it: None for the optional input(s) on odd calls
        a, b = ([None if k in {{ toggle }} else t for k, t in enumerate(x)] for x in (a, b))
{% endif %}
{% if check == "crash" %}
    want = f(*a)
    try:
        got = scripted(*b)
    except Exception as e:
        raise SystemExit(f"call {call}: TorchScript raised where eager did not: {e}")
{% else %}
    want, got = f(*a), scripted(*b)
{% if check in ("aliasing", "requires_grad") %}
    if {{ got }} != {{ want }}:
{% if check == "aliasing" %}
        raise SystemExit(f"call {call}: {{ what }} differ\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}\n"
                         f"  outputs changed by writing each tensor after the call: "
                         f"eager {changed_by_writes(want, a)}, compiled {changed_by_writes(got, b)}")
{% else %}
        raise SystemExit(f"call {call}: {{ what }} differ\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}")
{% endif %}
{% elif check != "invariant" %}
    try:
        torch.testing.assert_close({{ got }}, {{ want }}, equal_nan=True)
    except AssertionError as e:
        raise SystemExit(f"call {call}: {{ what }} differ: {e}\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}")
{% endif %}
{% endif %}
{% if check == "invariant" %}
graph = torch.jit.last_executed_optimized_graph()
if "prim::profile" in str(graph):  # {{ invariant }}
    raise SystemExit(f"profiling nodes left in the optimized graph:\n{graph}")
print("no profiling node left in the optimized graph: fixed")
{% else %}
print("eager and TorchScript agree on every call: fixed")
{% endif %}
{% elif check == "copies" %}
{% if mode == "fx" %}
b = inputs()
gm = reinplace(make_fx(torch.func.functionalize(f), tracing_mode="fake")(*b), *b)
node = next((n for n in gm.graph.nodes if n.name == {{ node|tojson }}), None)
copies = [] if node is None or str(node.target).split(".")[1].endswith("_") else [
    f"{node.name} = {node.target}(...) still writes a new {nbytes(node)}-byte buffer"]
{% else %}
import logging
from torch._inductor import metrics
# Inductor counts the bytes each compiled graph moves when its metrics log is on
logging.getLogger("torch._inductor.compile_fx.__inductor_metrics").setLevel(logging.INFO)
metrics.reset()
{{ compiled }}(*inputs())
if not ran:  # post_grad_passes no longer calls the pass by this name: nothing was watched
    print("the reinplace pass never ran under post_grad.reinplace_inplaceable_ops: the repro broke")
    raise SystemExit(125)
# the docstring's Cost figures are the oracle's loop-extent count, with the copy kept and
# with it dropped; Inductor's own count of the code it generated, copies kept, is this one
print(f"Inductor's own count (torch._inductor.metrics): f moves {metrics.num_bytes_accessed} "
      f"bytes per call in {metrics.generated_kernel_count} kernel(s), the copies below kept")
{% endif %}
print("\n".join(copies) or "no copy left: the pass writes in place (fixed)")
raise SystemExit(1 if copies else 0)
{% else %}
a, b = inputs(), inputs()
{% if check != "crash" %}
{% for line in setup %}
{{ line }}
{% endfor %}
{% endif %}
{% if check == "crash" %}
{% if mode != "fx" %}
compiled_f = {{ compiled }}  # outside the check: an error building it is not the bug
{% endif %}
{# the error without Dynamo's closing advice (Set TORCHDYNAMO_VERBOSE=1 ...), which was a
   crash repro's last line and read as its error (fresh user 32's B7), then its first line
   again, last: a long message ended with Dynamo's source carets (fresh user 34's B6); and
   without ATen's C++ backtrace (Exception raised from ..., frame #0 ...: 57 frames hid the
   verdict, fresh user 53's B6) #}
{% if backward %}
grads(f(*a), a)
try:
    grads(compiled_f(*b), b)  # the forward, then the backward of the same loss
except Exception as e:
    raise SystemExit(f"{str(e).split('Set TORCHDYNAMO_VERBOSE')[0].split('Exception raised from ')[0].rstrip()}\neager ran, the compiled forward or backward raised {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
{% else %}
f(*a)
try:
{% for line in setup %}
    {{ line }}
{% endfor %}
    {{ "compiled_f" if mode != "fx" else compiled }}(*b)
except Exception as e:
    raise SystemExit(f"{str(e).split('Set TORCHDYNAMO_VERBOSE')[0].split('Exception raised from ')[0].rstrip()}\neager ran, the compiled call raised {type(e).__name__}: {(str(e).splitlines() or [''])[0]}")
{% endif %}
{% if oob %}
if not checked:  # no wrapper bound reinterpret_tensor where the check looks: the repro broke
    raise SystemExit(125)
{% endif %}
print("eager and compiled both run: fixed")
{% else %}
want, got = f(*a), {{ compiled }}(*b)
{% if check == "grads" %}
want, got = grads(want, a), grads(got, b)  # one backward each: it frees what it saved
{% elif backward %}
for outs, ins in ((want, a), (got, b)):  # the backward runs too: it may write the inputs
    try:
        grads(outs, ins)
    except Exception:  # nothing to differentiate, or a refusal: compared as it stands
        pass
{% endif %}
{% if check in ("aliasing", "requires_grad") %}
if {{ got }} != {{ want }}:
{% if check == "aliasing" %}
    # what the shared storage means for a caller: write every input after the call
    raise SystemExit(f"{{ what }} differ\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}\n"
                     f"  outputs changed by writing each tensor after the call: "
                     f"eager {changed_by_writes(want, a)}, compiled {changed_by_writes(got, b)}")
{% else %}
    raise SystemExit(f"{{ what }} differ\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}")
{% endif %}
{% else %}
try:
    torch.testing.assert_close({{ got }}, {{ want }}, equal_nan=True)
except AssertionError as e:
{% if outside %}
    raise SystemExit(f"{{ what }} differ: {e}\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}"
                     + outside_views(a, b))
{% else %}
    raise SystemExit(f"{{ what }} differ: {e}\n  eager:    {{ want_f }}\n  compiled: {{ got_f }}")
{% endif %}
{% endif %}
print("eager and compiled agree: fixed")
{% endif %}
{% endif %}
'''
