"""The report's Jinja2 template (inline CSS, no scripts, no external resources)."""

TEMPLATE = r"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>aliasfuzz campaign {{ c.id }}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:right}
th{background:#eef}td.l,th.l{text-align:left}
.bad{background:#fbe3e3}.good{background:#e3f6e3}.muted{color:#777}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em;max-height:30em}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{border:1px solid #ccc;border-radius:6px;padding:.6em 1em}
.card b{display:block;font-size:1.5em}
details{margin:.6em 0;border:1px solid #ddd;border-radius:6px;padding:.4em .8em}
summary{cursor:pointer;font-weight:600}
ol.trail li{margin:.1em 0}
</style></head><body>
<h1 id="title">aliasfuzz campaign {{ c.id }}</h1>
<p class="muted">seed {{ c.seed }} · device {{ c.device }} · budget {{ c.budget }} · status {{ c.status }} ·
torch {{ c.versions.torch }} · triton {{ c.versions.triton }} · Python {{ c.versions.python }}</p>

<h2>Summary</h2>
<div class="cards" id="summary">
<div class="card"><b>{{ c.programs }}</b>programs ({{ c.mutants or 0 }} mutant{{ '' if c.mutants == 1 else 's' }} of corpus programs and seeds{% if c.partial %}; {{ c.partial }} more judged by some pipelines only, in the verdict counts{% endif %})</div>
<div class="card"><b>{{ c.tasks }}</b>pipeline runs</div>
<div class="card"><b>{{ "%.2f"|format(c.throughput or 0) }}</b>programs/s</div>
<div class="card"><b>{{ "%.0f"|format(c.seconds or 0) }} s</b>wall time</div>
<div class="card {{ 'bad' if counts.new else 'good' }}"><b>{{ counts.root_causes }}</b>root causes: {{ counts.new }} new, {{ counts.known }} known upstream, {{ counts.corpus }} already in the corpus{% if counts.unblamed %}, {{ counts.unblamed }} left unblamed when the time budget was spent{% endif %}; {{ counts.written }} corpus {{ 'entry' if counts.written == 1 else 'entries' }} written</div>
<div class="card"><b>{{ counts.raw_findings }}</b>raw findings (runs judged a finding; {{ counts.shrunk_findings }} shrunk and blamed{% if counts.budget_spent %}, {{ counts.budget_spent }} written unblamed when the time budget was spent (their shrink cut short, skipped or done){% endif %}{% if counts.known_first %}, {{ counts.known_first }} blamed as found, not shrunk (known bugs already filed whose workaround removes them){% endif %}{% if counts.dismissed %}, <a href="#dismissed">{{ counts.dismissed }} not written</a>{% endif %}{% if counts.deduplicated %}, <a href="#deduplicated">{{ counts.deduplicated }} not shrunk</a>{% endif %})</div>
<div class="card {{ 'bad' if internal.count else 'good' }}"><b>{{ internal.count }}</b>internal errors</div>
</div>

<h2 id="internal">Internal errors of aliasfuzz</h2>
<p>Failures of the harness itself (an exception in aliasfuzz's code, or a worker that died
outside the system under test): not findings, never written to the corpus. Fix them first:
a program that hit one was not judged.</p>
{% for e in internal.errors %}<details class="internal bad" {% if loop.first %}open{% endif %}>
<summary>program {{ e.i }} on {{ e.pipeline }}{% if e.check %} ({{ e.check }}){% endif %}: {{ e.summary }}</summary>
<pre>{{ e.stack }}</pre></details>{% else %}<p class="muted">none</p>{% endfor %}

<h2>Verdicts per pipeline</h2>
<table id="verdicts"><tr><th class="l">pipeline</th>{% for v in verdict_names %}<th>{{ v }}</th>{% endfor %}</tr>
{% for p, counts in verdicts.items() %}<tr><td class="l">{{ p }}</td>
{% for v in verdict_names %}<td class="{{ 'bad' if counts.get(v) and v in finding_names else '' }}">{{ counts.get(v, 0) }}</td>{% endfor %}</tr>
{% endfor %}</table>

<h2>Root causes</h2>
<p>One row per root cause (one corpus entry: blamed stage, verdict, check, evidence), new ones first,
then <i>unblamed</i> ones (new entries written unblamed when the time budget was spent: maybe a
known bug or an entry found again, so no issue draft; <code>python -m aliasfuzz.campaign.rebuild</code>
shrinks and blames them), then known upstream bugs, then those already in the corpus. <i>stage</i>: the first stage of the
pipeline whose result departs from eager; <i>full</i>: whether full <code>torch.compile</code>
reproduces this campaign's fast-path sightings (else the entry's own; <i>n/a</i>: no fast-path
sighting, nothing to re-run; <i>not re-judged</i>: a fast-path sighting written when the time
budget was spent); <i>hits</i>: sightings in this campaign, per pipeline
(all campaigns in brackets); <i>repro</i>: lines of the entry's standalone repro.py.</p>
{% if causes %}<table id="root-causes"><tr><th class="l">status</th><th class="l">stage</th><th class="l">verdict / check</th>
<th class="l">full</th><th class="l">upstream</th><th class="l">hits</th><th>repro</th><th class="l">entry</th></tr>
{% for r in causes %}<tr class="{{ 'bad' if r.status == 'new' else '' }}"><td class="l">{{ r.status }}</td>
<td class="l">{{ r.stages|join(", ") if r.stages else (r.stage or "unblamed") }}</td><td class="l">{{ r.verdict }} / {{ r.check }}{% if r.campaign_checks %} (this campaign also {{ r.campaign_checks|join(", ") }}){% endif %}</td>
<td class="l">{{ r.full or "n/a" }}</td>
<td class="l">{% if r.known_bug %}known {{ r.known_bug.issue }}{% endif %}{% for b in r.related %}{% if loop.first %}{% if r.known_bug %}; {% endif %}related {% endif %}{{ b.issue }}{% if not loop.last %}, {% endif %}{% endfor %}</td>
<td class="l">{% for p, n in r.hits.items() %}{{ p }} &times; {{ n }}{% if not loop.last %}, {% endif %}{% endfor %}{% if r.hits_total %} ({{ r.hits_total.values()|sum }}){% endif %}</td>
<td>{{ r.repro_lines or "" }}</td><td class="l"><a href="#cause-{{ loop.index }}">{{ r.id }}</a></td></tr>
{% endfor %}</table>{% endif %}
{% for r in causes %}<details id="cause-{{ loop.index }}" {% if loop.first %}open{% endif %}>
<summary>{{ r.status }}: {{ r.title or r.id }}</summary>
{% if r.error %}<p class="bad">corpus entry {{ "missing" if "not in the corpus" in r.error else "unreadable" }}: {{ r.error }}</p>{% else %}
<p class="muted">{{ r.id }} · {{ r.verdict }} / {{ r.check }}{% if r.campaign_checks %} (this campaign's sightings also {{ r.campaign_checks|join(", ") }}: see the entry's hits){% endif %} · ops {{ r.ops|join(", ") }} · statements
{% if r.budget_spent and r.budget_spent.startswith("not shrunk") %}{{ r.statements.original }} (not shrunk: time budget spent){% elif r.budget_spent and r.budget_spent.startswith("shrink cut short") %}{{ r.statements.original }} &rarr; {{ r.statements.minimized }} (shrink cut short: time budget spent){% else %}{{ r.statements.original }} &rarr; {{ r.statements.minimized }} after shrinking{% endif %}{% if r.full %} · full torch.compile: {{ r.full }}{% endif %}</p>
{% if r.known_bug %}<p>Known upstream: {{ r.known_bug.issue }} {{ r.known_bug.title or "" }}</p>{% endif %}
{% for b in r.related %}<p class="muted">Related: {{ b.issue }} {{ b.title }}</p>{% endfor %}
<h4>stage by stage</h4>
{% if r.trail %}<ol class="trail">{% for st, what in r.trail %}<li class="{{ 'bad' if what.startswith('departs') else 'good' if what == 'agrees' else 'muted' }}"><code>{{ st }}</code>: {{ what }}</li>{% endfor %}</ol>
{% else %}<p class="muted">not cut stage by stage{% if r.blame_reason %}: {{ r.blame_reason }}{% endif %}</p>{% endif %}
<p>{{ r.explanation }}</p>
{% for s in r.campaign_sightings %}<p class="muted">This campaign's sighting on program {{ s.i }} ({{ s.pipeline }}) was {{ s.verdict }} / {{ s.check }}{% if s.explanation %}: {{ s.explanation }}{% endif %}. The explanation above, the diff and the program below are the entry's first sighting's; the entry's hits (meta.json) keep each sighting's program.</p>
{% endfor %}{% if r.diff %}<h4>eager / compiled</h4><pre>{{ r.diff }}</pre>{% endif %}
<h4>minimized program (repro.py, {{ r.repro_lines }} lines, {{ r.repro_way }}: {{ r.repro_path }}{% if r.status == "new" %}; issue draft: <a href="upstream/{{ r.id }}.md">upstream/{{ r.id }}.md</a>{% endif %})</h4>
{% if r.repro_sighting %}<p class="muted">{{ r.repro_sighting }}</p>{% endif %}
{% if r.harness %}<p class="muted">harness: {{ r.harness }}</p>{% endif %}
<pre>{{ r.repro }}</pre>{% endif %}
</details>{% else %}<p>No findings in this campaign.</p>{% endfor %}

<h2 id="dismissed">Findings not written</h2>
<p>Runs judged a finding that the campaign did not write to the corpus: <i>flaky</i>, the
replay did not show it again, or no stage-by-stage cut reproduced a worker's death (memory an
earlier run corrupted), or neither a cut nor the pipeline run again in a fresh interpreter
reproduced it (the <i>why</i> column says which); <i>harness-only</i>, a fast-path finding that full
<code>torch.compile</code> does not show, or cannot run on this host. They are counted in the
verdict table above, and are not bugs the campaign claims.</p>
{% if dismissed %}<table id="dismissed-findings"><tr><th>program</th><th class="l">pipeline</th><th class="l">kind</th><th class="l">why</th></tr>
{% for d in dismissed %}<tr><td>{{ d.i }}</td><td class="l">{{ d.pipeline }}</td><td class="l">{{ d.kind }}</td><td class="l">{{ d.why }}</td></tr>
{% endfor %}</table>{% else %}<p class="muted">none</p>{% endif %}
<h3 id="deduplicated">Not shrunk: the key of an earlier finding</h3>
<p>Runs judged a finding whose pipeline, verdict, check, decision kinds, op kinds and ops were
an earlier finding's (a coarse key, taken before shrinking and blame, to save the shrinking):
they file no corpus entry and no sighting. A different root cause with the same key is not
filed; <code>python -m aliasfuzz.campaign.rebuild</code> can file one from its program.</p>
{% if deduplicated %}<table id="deduplicated-findings"><tr><th>program</th><th class="l">pipeline</th><th class="l">key first seen on</th></tr>
{% for d in deduplicated %}<tr><td>{{ d.i }}</td><td class="l">{{ d.pipeline }}</td><td class="l">{% if d.like %}program {{ d.like[0] }} on {{ d.like[1] }}{% endif %}</td></tr>
{% endfor %}</table>{% else %}<p class="muted">none</p>{% endif %}

<h2>Documented refusals</h2>
<p>Runs judged <code>unsupported</code> (not findings): the pipeline refused a valid program in a
documented way (Dynamo's <code>Unsupported</code>, a "not supported" <code>NotImplementedError</code>,
a TorchScript frontend rejection, a by-design limit), by rule (oracle/README.md).</p>
{% for p, reasons in refusals.items() %}<table class="refusals"><tr><th class="l">{{ p }}: rule</th><th>runs</th></tr>
{% for r, n in reasons.items() %}<tr><td class="l">{{ r }}</td><td>{{ n }}</td></tr>{% endfor %}
</table>{% else %}<p class="muted">none</p>{% endfor %}

<h2>Programs a pipeline rejected</h2>
<p>Runs judged <code>invalid-program</code> (not findings): the program has no single eager
meaning (eager itself raised, a validation rule rejects it: the check names the rule, or a
second eager opinion contradicted eager: <code>undefined-eager</code>).</p>
{% for p, reasons in rejections.items() %}<table class="rejections"><tr><th class="l">{{ p }}: reason</th><th>runs</th></tr>
{% for r, n in reasons.items() %}<tr><td class="l">{{ r }}</td><td>{{ n }}</td></tr>{% endfor %}
</table>{% else %}<p class="muted">none</p>{% endfor %}
{% if undefined_eager %}<p>Second eager opinions (they review findings), and the findings they turned into <code>undefined-eager</code> (eager contradicted by a second eager opinion), by opinion:</p>
<table class="rejections"><tr><th class="l">pipeline</th><th>reviewed</th><th>reviewed on the other device</th><th>undefined-eager</th><th>deterministic</th><th>other device</th><th>only deterministic</th><th>only other device</th></tr>
{% for p, c in undefined_eager.items() %}<tr><td class="l">{{ p }}</td><td>{{ c.reviewed }}</td><td>{{ c["reviewed-other-device"] }}</td><td>{{ c.runs }}</td><td>{{ c.deterministic }}</td><td>{{ c["other-device"] }}</td><td>{{ c["only-deterministic"] }}</td><td>{{ c["only-other-device"] }}</td></tr>{% endfor %}
</table>{% endif %}

<h2>Runs the oracle could not decide</h2>
<p>Runs judged <code>unknown</code> (never findings), by reason.</p>
{% for p, reasons in unknown.items() %}<table class="rejections"><tr><th class="l">{{ p }}: reason</th><th>runs</th></tr>
{% for r, n in reasons.items() %}<tr><td class="l">{{ r }}</td><td>{{ n }}</td></tr>{% endfor %}
</table>{% else %}<p class="muted">none</p>{% endfor %}

<h2>Decisions against ground truth</h2>
<p>Per pipeline: the oracle's ground truth of each candidate against what the pass did.
An unsafe candidate that was reinplaced is a claim of a bug, a safe one that was copied a claim
of a missed opportunity: claims, counted per decision before confirmation, shrinking and blame,
which may file them under another stage or verdict (or dismiss them); the findings are the root
causes above.</p>
<div class="cards">
{% for p, m in confusion.items() %}<table class="confusion"><tr><th class="l">{{ p }}</th><th>reinplaced</th><th>copied</th></tr>
{% for t in ["safe", "unsafe", "unknown"] %}<tr><td class="l">{{ t }}</td>
<td class="{{ 'bad' if t == 'unsafe' and m[t].reinplaced else '' }}">{{ m[t].reinplaced }}</td>
<td class="{{ 'bad' if t == 'safe' and m[t].copied else '' }}">{{ m[t].copied }}</td></tr>{% endfor %}
</table>{% else %}<p class="muted">no decisions recorded</p>{% endfor %}
</div>

<h2>Op-kind coverage</h2>
<table id="coverage"><tr><th class="l">op kind</th><th>programs</th><th>findings (runs)</th></tr>
{% for k, n in coverage.programs_with_kind.items() %}<tr><td class="l">{{ k }}</td><td>{{ n }}</td>
<td>{{ kind_findings[k] }}</td></tr>{% endfor %}</table>
{% if charts.coverage %}<img alt="op-kind coverage" src="{{ charts.coverage }}">{% endif %}

<h2>Throughput</h2>
<table><tr><th class="l">pipeline</th><th>runs</th><th>median s</th><th>max s</th></tr>
{% for p, s in seconds.items() %}<tr><td class="l">{{ p }}</td><td>{{ s|length }}</td>
<td>{{ "%.3f"|format(s[s|length // 2] if s else 0) }}</td><td>{{ "%.3f"|format(s[-1] if s else 0) }}</td></tr>{% endfor %}</table>
{% if charts.throughput %}<img alt="seconds per program" src="{{ charts.throughput }}">{% endif %}

<h2>Where the time goes</h2>
{% if costs.rows %}<p class="muted">Seconds per stage summed over every worker; shares are of
the worker time, {{ costs.workers }} workers &times; {{ "%.1f"|format(costs.wall) }} s wall.</p>
<table id="costs"><tr><th class="l">stage</th><th>seconds</th><th>ms per program</th><th>share</th></tr>
{% for r in costs.rows %}<tr><td class="l">{{ r.stage }}</td><td>{{ "%.2f"|format(r.seconds) }}</td>
<td>{{ "%.1f"|format(r.ms_per_program) if r.ms_per_program is not none else "" }}</td>
<td>{{ "%.1f%%"|format(100 * r.share) if r.share is not none else "" }}</td></tr>{% endfor %}</table>
{% else %}<p class="muted">No stage times in this campaign's journal.</p>{% endif %}
{% if gpus %}<h3>GPUs</h3>
<p class="muted">Utilization and memory sampled every 2 s while the campaign ran; workers are
spread over the GPUs (CUDA_VISIBLE_DEVICES per worker).</p>
<table id="gpus"><tr><th class="l">GPU</th><th class="l">CUDA_VISIBLE_DEVICES</th><th>workers</th>
<th>utilization mean</th><th>utilization max</th><th>memory max (MiB)</th><th>samples</th></tr>
{% for g in gpus %}<tr><td class="l">{{ g.index }} {{ g.name or "" }}</td><td class="l">{{ g.device }}</td>
<td>{{ g.workers }}</td>{% if g.samples %}<td>{{ "%.0f%%"|format(g.util_mean_percent) }}</td>
<td>{{ "%.0f%%"|format(g.util_max_percent) }}</td><td>{{ g.mem_max_mib }}</td>
{% else %}<td class="muted" colspan="3">not measured (no pynvml, or NVML failed)</td>{% endif %}
<td>{{ g.samples }}</td></tr>{% endfor %}</table>{% endif %}

<h2>Trends across campaigns</h2>
{% if charts.trend %}<img alt="trends" src="{{ charts.trend }}">{% endif %}
<table id="history"><tr><th class="l">campaign</th><th class="l">status</th><th>programs</th><th>programs/s</th><th>findings</th><th>new</th><th>internal errors</th></tr>
{% for h in history %}<tr><td class="l">{{ h.id }}</td><td class="l">{{ h.status }}</td><td>{{ h.programs }}</td>
<td>{{ "%.2f"|format(h.throughput or 0) }}</td><td>{{ h.findings }}</td><td>{{ h.new_findings }}</td>
<td class="{{ 'bad' if h.internal_errors else '' }}">{{ h.internal_errors }}</td></tr>{% endfor %}</table>
<p class="muted">Machine-readable data: summary.json next to this file.</p>
</body></html>
"""
