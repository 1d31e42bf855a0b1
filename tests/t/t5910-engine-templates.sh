#!/bin/sh
test_description='the cluster and CI templates of ci/ (Slurm, Kubernetes, GitHub Actions, GitLab CI) parse and agree on their shards; README shows them'
. ./test-lib.sh

TOP=$(cd "$TEST_DIRECTORY/../.." && pwd)

# a python3 with PyYAML (Debian: python3-yaml, in ci/install-deps.sh)
for py in /usr/bin/python3 python3; do
	if "$py" -c "import yaml" 2>/dev/null; then PY=$py; break; fi
done
test -n "${PY:-}" && test_set_prereq PYYAML

# check-templates.py CI_DIR: every YAML file parses; the shard counts agree
cat >check-templates.py <<\EOF
import glob, os, sys, yaml
ci = sys.argv[1]
bad = []
docs = {}
for f in sorted(glob.glob(ci + "/**/*.y*ml", recursive=True)):
    try:
        docs[os.path.relpath(f, ci)] = list(yaml.safe_load_all(open(f)))
    except yaml.YAMLError as e:
        bad.append("%s: %s" % (f, str(e).replace("\n", " ")))
def need(cond, what):
    if not cond:
        bad.append(what)
def env_of(container, name):
    return [e["value"] for e in container.get("env", []) if e["name"] == name]
k8s = docs.get("k8s/sluice-shards.yaml", [])
jobs = [d for d in k8s if d and d.get("kind") == "Job"]
pvcs = [d["metadata"]["name"] for d in k8s if d and d.get("kind") == "PersistentVolumeClaim"]
need(len(jobs) == 1, "k8s/sluice-shards.yaml: one Job")
for j in jobs:
    s = j["spec"]
    c = s["template"]["spec"]["containers"][0]
    n = int(env_of(c, "SLUICE_SHARDS")[0])
    need(s.get("completionMode") == "Indexed", "k8s: completionMode is not Indexed")
    need(s.get("completions") == n == s.get("parallelism"), "k8s: completions, parallelism and SLUICE_SHARDS differ")
    script = " ".join(c["args"])
    need("JOB_COMPLETION_INDEX" in script and "sluice run --shard" in script, "k8s: the shard is not the completion index")
    claims = [v["persistentVolumeClaim"]["claimName"] for v in s["template"]["spec"]["volumes"] if "persistentVolumeClaim" in v]
    need(claims and all(x in pvcs for x in claims), "k8s: the out volume's claim is not declared")
    for m in docs.get("k8s/sluice-merge.yaml", []):
        mc = m["spec"]["template"]["spec"]["containers"][0]
        need(env_of(mc, "SLUICE_SHARDS") == [str(n)], "k8s: the merge job's SLUICE_SHARDS differs")
        need("sluice merge" in " ".join(mc["args"]), "k8s: the merge job does not merge")
gh = docs.get("github/sluice-shards.yml", [{}])[0] or {}
ghj = gh.get("jobs", {})
need(ghj.get("shard", {}).get("strategy", {}).get("matrix", {}).get("shard") == list(range(int(gh.get("env", {}).get("SHARDS", -1)))), "github: matrix.shard is not 0..SHARDS-1")
need(ghj.get("merge", {}).get("needs") == "shard", "github: merge does not need shard")
need(any("upload-artifact" in st.get("uses", "") for st in ghj.get("shard", {}).get("steps", [])), "github: shards upload no artifact")
need(any("sluice merge" in st.get("run", "") for st in ghj.get("merge", {}).get("steps", [])), "github: merge does not merge")
gl = docs.get("gitlab/sluice-shards.gitlab-ci.yml", [{}])[0] or {}
need(gl.get("shard", {}).get("parallel") == int(gl.get("variables", {}).get("SLUICE_SHARDS", -1)), "gitlab: shard.parallel is not SLUICE_SHARDS")
need("shard" in gl.get("merge", {}).get("needs", []), "gitlab: merge does not need shard")
need(gl.get("stages", []).index("merge") > gl.get("stages", []).index("shard"), "gitlab: merge runs before shard")
need(any("sluice merge" in l for l in gl.get("merge", {}).get("script", [])), "gitlab: merge does not merge")
need(len(docs) >= 4, "fewer than 4 YAML templates in " + ci)
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF

test_expect_success PYYAML 'every YAML template parses and its shards agree' '
	"$PY" check-templates.py "$TOP/ci"
'

test_expect_success PYYAML 'the check fails on a template that does not parse or whose shards disagree' '
	cp -R "$TOP/ci" ci-bad &&
	printf "jobs:\n  shard: [unclosed\n" >ci-bad/github/sluice-shards.yml &&
	test_must_fail "$PY" check-templates.py ci-bad >out &&
	grep -q "sluice-shards.yml" out &&
	cp -R "$TOP/ci" ci-bad2 &&
	sed "s/parallel: 4/parallel: 3/" "$TOP/ci/gitlab/sluice-shards.gitlab-ci.yml" >ci-bad2/gitlab/sluice-shards.gitlab-ci.yml &&
	test_must_fail "$PY" check-templates.py ci-bad2 >out &&
	grep -q "gitlab: shard.parallel is not SLUICE_SHARDS" out
'

test_expect_success 'the Slurm scripts are shell scripts with their array and dependency' '
	for f in sluice-submit.sh sluice-array.sbatch sluice-merge.sbatch; do
		sh -n "$TOP/ci/slurm/$f" || return 1
	done &&
	grep -q "^#SBATCH --job-name=sluice-shard" "$TOP/ci/slurm/sluice-array.sbatch" &&
	grep -q "SLURM_ARRAY_TASK_ID" "$TOP/ci/slurm/sluice-array.sbatch" &&
	grep -q "sbatch --parsable --array=" "$TOP/ci/slurm/sluice-submit.sh" &&
	grep -q "dependency=\"afterok:" "$TOP/ci/slurm/sluice-submit.sh"
'

test_expect_success 'README has "Running on many machines" with each template and the Slurm example the test runs' '
	sed -n "/^## Running on many machines/,/^## /p" "$TOP/README.md" >section &&
	test -s section &&
	for f in ci/slurm/sluice-submit.sh ci/slurm/sluice-array.sbatch ci/slurm/sluice-merge.sbatch \
		ci/k8s/sluice-shards.yaml ci/k8s/sluice-merge.yaml ci/github/sluice-shards.yml \
		ci/gitlab/sluice-shards.gitlab-ci.yml; do
		grep -q "$f" section || { echo "README: no $f"; return 1; }
	done &&
	grep -q "sh ci/slurm/sluice-submit.sh examples/migration/campaign.yaml" section &&
	grep -q "sluice-submit.sh\" \$CAMPAIGN" "$TEST_DIRECTORY/t5920-slurm.sh"
'

test_done
