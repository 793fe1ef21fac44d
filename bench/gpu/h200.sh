#!/usr/bin/env bash
# Device-machine steps for the GPU tier (issue 6), one phase per argument, run from the
# repository root on the H200 (torch 2.11, triton 3.6; no network). The wheels of
# z3-solver and hypothesis travel in .whl/ and the ../shared cases in .gpu/cases (both
# ignored by git, carried by the device tool). Output files go to $OUT (or ./gpu-out).
#
#   bash bench/gpu/h200.sh setup tests diagnose suite     # tests, cases, eager errors
#   SUITE_PATHS=tests/unit bash bench/gpu/h200.sh setup suite  # a part of the suite per call
#   bash bench/gpu/h200.sh throughput                     # short 16-worker campaigns
#   bash bench/gpu/h200.sh ab SECONDS SEED with,without   # default campaign with/without --share-trace
#   bash bench/gpu/h200.sh ab SECONDS SEED without,old    # default vs the settings before issue 16
#   bash bench/gpu/h200.sh ab SECONDS SEED corpus,mutate  # from the repository corpus, --mutate 0.33 or not
#   bash bench/gpu/h200.sh campaign-start SECONDS         # 16-worker campaign, detached
#   bash bench/gpu/h200.sh campaign-wait                  # wait for it, copy its summary
#   bash bench/gpu/h200.sh campaign SECONDS SEED          # the same in the foreground
#   bash bench/gpu/h200.sh campaign-part SECONDS SEED STOP  # interrupt at STOP s of this
#       script, save state+corpus to $OUT/resume.tgz (a campaign longer than one device call)
#   bash bench/gpu/h200.sh campaign-resume                # .gpu/resume.tgz: --resume it
#   bash bench/gpu/h200.sh cpu-campaign PROGRAMS SEED     # default CPU campaign, all cores
#   bash bench/gpu/h200.sh breadth-ab N ROUNDS PAR        # issue 15's A/B, PAR pinned processes
#   bash bench/gpu/h200.sh breadth-cost N PAR             # issue 15's additions, paired
set -uo pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 ALIASFUZZ_CASES=$PWD/.gpu/cases ALIASFUZZ_AUDIT=$PWD/.gpu/audit/labels.tsv \
  PYTHONPATH=/tmp/site
# cuBLAS needs a fixed workspace for the deterministic second eager opinion (oracle/opinions.py)
export CUBLAS_WORKSPACE_CONFIG=${CUBLAS_WORKSPACE_CONFIG:-:4096:8}
STATE=/tmp/af-state
W=${ALIASFUZZ_GPU_WORKERS:-16}

summary() {  # the newest campaign's summary.json -> $OUT/$1
    local s
    s=$(ls -t /tmp/af-reports/*/summary.json 2>/dev/null | head -1)
    [ -n "$s" ] && cp "$s" "$OUT/$1"
}

while [ $# -gt 0 ]; do
  phase=$1
  shift
  case $phase in
    setup)
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
      python3 -m pip install -q --no-deps --no-build-isolation --no-index -e . >/dev/null 2>&1
      nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
      python3 -c "import torch, triton, z3, hypothesis; print('torch', torch.__version__, \
'triton', triton.__version__, 'cuda', torch.cuda.is_available())"
      ;;
    tests)
      python3 -m pytest -p no:benchmark -p no:cacheprovider -n 12 -m gpu tests/ -q -rA \
        2>&1 | tee "$OUT/gpu-tests.txt" | tail -40
      python3 -m pytest -p no:benchmark -p no:cacheprovider -n 6 -q -rA \
        tests/e2e/test_cases_judged.py -k "b15 or b16 or b18" 2>&1 | tee "$OUT/cuda-cases.txt" | tail -12
      ;;
    suite)  # everything else on torch 2.11 (the CPU suite runs on 2.13); the project's own
      # timeout (a --timeout 300 here errored test_repro's module fixture, which runs every
      # repro script); -v so that a call cut at the device's limit still lists what failed
      # -m replaces the default "not fuzz": keep it out (the fuzz property finds bugs, by design)
      python3 -m pytest -p no:benchmark -p no:cacheprovider -p no:randomly -n 15 -v -m "not gpu and not fuzz" \
        ${SUITE_PATHS:-tests/} > "$OUT/suite.txt" 2>&1
      grep -E " (FAILED|ERROR) |passed|failed" "$OUT/suite.txt" | tail -40
      ;;
    diagnose)  # generated programs whose eager reference raises on CUDA
      python3 bench/gpu/eager_errors.py --device cuda --n 500 --seed 11 > "$OUT/eager-errors.txt" 2>&1
      head -c 3000 "$OUT/eager-errors.txt"
      ;;
    throughput)
      # programs/s of a 16-worker campaign, with and without the full inductor pipeline
      for pl in inductor-reinplace,aot_eager,fx-reinplace,torchscript inductor; do
        mkdir -p /tmp/af-corpus-tp  # run refuses a named corpus that is not there
        python3 -m aliasfuzz.cli run --device cuda --workers "$W" --time 75 --seed 11 -q \
          --pipelines "$pl" --corpus /tmp/af-corpus-tp --state "$STATE" --report /tmp/af-reports \
          --shrink-budget 20 2>&1 | tail -4
        summary "throughput-${pl%%,*}.json"
      done
      ;;
    ab)  # ab SECONDS SEED MODES: the default campaign with all cores, with --share-trace
      # (MODES has "with") and without it ("without", the default), or with the settings
      # from before issue 16's levers ("old": --no-shrink-once --kernel-cache worker), or
      # with one kernel cache per worker only ("workercache"), same
      # seed and budget; one call each when 5-minute campaigns would not fit one device call
      secs=$1 seed=$2 modes=$3
      shift 3
      for mode in ${modes//,/ }; do
        extra=""; [ "$mode" = with ] && extra="--share-trace"
        [ "$mode" = old ] && extra="--no-shrink-once --kernel-cache worker"
        [ "$mode" = workercache ] && extra="--kernel-cache worker"
        # "corpus" / "mutate" (issue 15): both start from a copy of the repository's corpus,
        # "mutate" draws a third of its programs as mutants of its entries and seed twins
        [ "$mode" = mutate ] && extra="--mutate 0.33"
        if [ "$mode" = corpus ] || [ "$mode" = mutate ]; then
          rm -rf "/tmp/af-corpus-ab-$mode" && cp -r corpus "/tmp/af-corpus-ab-$mode"
        fi
        mkdir -p "/tmp/af-corpus-ab-$mode"  # run refuses a named corpus that is not there
        python3 -m aliasfuzz.cli run --device cuda --workers "$W" --time "$secs" --seed "$seed" -q \
          $extra --corpus "/tmp/af-corpus-ab-$mode" --state "$STATE" --report /tmp/af-reports \
          > "$OUT/ab-$mode.log" 2>&1
        echo "== $mode"; grep -E "^(root causes|campaign|internal)" "$OUT/ab-$mode.log"
        summary "ab-$mode-summary.json"
        if [ "$mode" = mutate ] || [ "$mode" = corpus ]; then  # sightings by how they were drawn
          python3 bench/gpu/sightings.py "/tmp/af-corpus-ab-$mode" corpus | tee -a "$OUT/ab-$mode.log"
        fi
      done
      ;;
    campaign-start)
      secs=${1:-600}
      shift
      mkdir -p /tmp/af-corpus
      setsid nohup python3 -m aliasfuzz.cli run --device cuda --workers "$W" --time "$secs" \
        --seed 2026 -q --corpus /tmp/af-corpus --state "$STATE" --report /tmp/af-reports \
        > /tmp/af-campaign.log 2>&1 < /dev/null &
      echo "campaign started, pid $!"
      ;;
    campaign-wait)
      while pgrep -f "aliasfuzz.cli run --device cuda" > /dev/null; do sleep 5; done
      tail -30 /tmp/af-campaign.log
      cp /tmp/af-campaign.log "$OUT/campaign.log"
      summary campaign-summary.json
      tar czf "$OUT/campaign-corpus.tgz" -C /tmp af-corpus 2>/dev/null
      tar czf "$OUT/campaign-state.tgz" -C /tmp af-state 2>/dev/null
      ;;
    campaign)  # campaign SECONDS SEED, foreground: summary and log to $OUT
      secs=$1 seed=$2
      shift 2
      mkdir -p "/tmp/af-corpus-$seed"
      python3 -m aliasfuzz.cli run --device cuda --workers "$W" --time "$secs" --seed "$seed" -q \
        --corpus "/tmp/af-corpus-$seed" --state "$STATE" --report /tmp/af-reports \
        > "$OUT/campaign-$seed.log" 2>&1
      grep -E "^(root causes|campaign|report|internal)" "$OUT/campaign-$seed.log"
      summary "campaign-$seed-summary.json"
      ;;
    campaign-part)  # the first part of a campaign longer than one call (10 minutes)
      secs=$1 seed=$2 stop=$3
      shift 3
      mkdir -p /tmp/af-corpus
      python3 -m aliasfuzz.cli run --device cuda --workers "$W" --time "$secs" --seed "$seed" -q \
        --corpus /tmp/af-corpus --state "$STATE" --report /tmp/af-reports \
        > /tmp/af-campaign.log 2>&1 < /dev/null &
      pid=$!
      while [ "$SECONDS" -lt "$stop" ] && kill -0 "$pid" 2>/dev/null; do sleep 2; done
      kill -INT "$pid" 2>/dev/null  # KeyboardInterrupt: journal closed, status interrupted
      wait "$pid"; echo "campaign exit $? at ${SECONDS}s"
      tail -3 /tmp/af-campaign.log
      tar czf "$OUT/resume.tgz" -C /tmp af-corpus af-state af-campaign.log
      ls -la "$OUT/resume.tgz"
      ;;
    campaign-resume)  # the rest of it, from .gpu/resume.tgz (the last call's $OUT/resume.tgz)
      tar xzf .gpu/resume.tgz -C /tmp || exit 1
      python3 -m aliasfuzz.cli run --resume --state "$STATE" -q >> /tmp/af-campaign.log 2>&1
      echo "resume exit $?"
      grep -E "^(root causes|campaign|report|internal)" /tmp/af-campaign.log
      cp /tmp/af-campaign.log "$OUT/campaign.log"
      summary campaign-summary.json
      tar czf "$OUT/campaign-corpus.tgz" -C /tmp af-corpus 2>/dev/null
      ;;
    cpu-campaign)  # cpu-campaign PROGRAMS SEED: the default CPU campaign on all cores (the
      # issue-12 audit campaign), corpus and log to $OUT
      n=$1 seed=$2
      shift 2
      mkdir -p "/tmp/af-corpus-cpu-$seed"
      python3 -m aliasfuzz.cli run --device cpu --workers "$W" --programs "$n" --seed "$seed" -q \
        --corpus "/tmp/af-corpus-cpu-$seed" --state "$STATE" --report /tmp/af-reports \
        > "$OUT/cpu-campaign-$seed.log" 2>&1
      echo "cpu campaign exit $?"
      grep -E "^(root causes|campaign|report|internal)" "$OUT/cpu-campaign-$seed.log"
      summary "cpu-campaign-$seed-summary.json"
      tar czf "$OUT/cpu-campaign-$seed-corpus.tgz" -C /tmp "af-corpus-cpu-$seed" 2>/dev/null
      ;;
    breadth-ab)  # breadth-ab N ROUNDS PAR: bench/breadth_ab.py --arms all (issue 15's
      # throughput bound, CPU) in PAR processes of seeds 0..PAR-1, each pinned to 2 cores, so
      # that one call gives PAR times the programs; then the mean programs/s of each arm.
      # $AB_ARGS: more flags (a candidate's --grad-share/--dynamic-share); $AB_TAG names the
      # output (breadth-ab-$AB_TAG.txt); $AB_SEED0: the first seed (default 0)
      n=$1 rounds=$2 par=$3 tag=${AB_TAG:-all}
      shift 3
      pids=()
      rm -f /tmp/breadth-ab-*.txt
      for k in $(seq 0 $((par - 1))); do
        # shellcheck disable=SC2086
        taskset -c $((2 * k)),$((2 * k + 1)) python3 -m bench.breadth_ab -n "$n" --rounds "$rounds" \
          --arms all --seed "$((${AB_SEED0:-0} + k))" --warmup 4 ${AB_ARGS:-} > "/tmp/breadth-ab-$k.txt" 2>&1 &
        pids+=($!)
      done
      wait "${pids[@]}"
      grep -h "^round\|^ratio" /tmp/breadth-ab-*.txt > "$OUT/breadth-ab-$tag.txt"
      # every process's whole output (its --stages table, a crash's last lines) in one file
      for f in /tmp/breadth-ab-*.txt; do echo "== $f"; grep -v "^E1\|^W1\|warn" "$f" | tail -60; done \
        > "$OUT/breadth-ab-$tag-full.txt"
      awk '/^round/ {s[$3] += $5; c[$3]++} END {for (a in s) printf "%s mean %.3f programs/s over %d arm runs\n", a, s[a] / c[a], c[a]; printf "ratio with/without %.3f\n", (s["with"] / c["with"]) / (s["without"] / c["without"])}' \
        "$OUT/breadth-ab-$tag.txt" | tee -a "$OUT/breadth-ab-$tag.txt"
      ;;
    breadth-cost)  # breadth-cost N PAR: bench/breadth_cost.py, seeds 0..PAR-1, each seed's
      # five variants one after another (order rotated) in one 2-core slot, each process
      # with an Inductor cache of its own, written straight to $OUT, one file per variant
      # (a timed-out call still returns what was judged); a process that a program crashes
      # is restarted past it
      n=$1 par=$2
      shift 2
      pids=()
      for k in $(seq 0 $((par - 1))); do
        (
          vs=(asis nograd static nometa noopt)
          for j in 0 1 2 3 4; do
            # one file per variant, every seed appending its lines: the device tool
            # returns at most 8 files from $OUT
            v=${vs[$(((j + k) % 5))]} f="$OUT/breadth-cost-$v.txt" start=0 warm=3
            cache=$(mktemp -d)
            while [ "$start" -lt "$n" ]; do
              TORCHINDUCTOR_CACHE_DIR=$cache taskset -c $((2 * k)),$((2 * k + 1)) \
                python3 -m bench.breadth_cost -n "$n" --seed "$k" --warmup "$warm" \
                --variant "$v" --start "$start" --timeout 90 >> "$f" 2>/dev/null && break
              last=$(awk -v k="$k" '($1 == "t" || $1 == "x") && $2 == k {i = $3} END {print (i == "" ? -1 : i)}' "$f")
              echo "x $k $((last + 1)) crash" >> "$f"
              start=$((last + 2)) warm=1
            done
          done
        ) &
        pids+=($!)
      done
      wait "${pids[@]}"
      python3 -m bench.breadth_cost --combine "$OUT"/breadth-cost-{asis,nograd,static,nometa,noopt}.txt \
        | tee "$OUT/breadth-cost.txt"
      ;;
    *) echo "h200.sh: unknown phase $phase" >&2; exit 2 ;;
  esac
done
