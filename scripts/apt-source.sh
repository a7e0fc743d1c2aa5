# Sourced by scripts/curl-suite.sh and scripts/php-suite.sh: Debian's source of an installed
# package, with apt-get source.
#   apt_source WORK PACKAGE=VERSION   unpacks the source (patches applied) under WORK
# apt-get source needs deb-src entries. Rather than edit /etc/apt (and have to restore it, and
# have every other apt user see the change meanwhile), the source entries of the configured Debian
# suites go into a private apt configuration under WORK/apt, used by this one command.

apt_source() {
  local work=$1 want=$2
  local apt=$work/apt
  rm -rf "$apt"
  mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
  : >"$apt/none.list"
  python3 - "$apt/parts/deb-src.sources" <<'EOF'
import glob, re, sys
out = []
for path in sorted(glob.glob('/etc/apt/sources.list.d/*.sources')):
    for stanza in open(path).read().split('\n\n'):
        if re.search(r'^Enabled:\s*no', stanza, re.M | re.I):
            continue
        if re.search(r'^Types:.*\bdeb\b', stanza, re.M) and re.search(r'^URIs:.*debian', stanza, re.M):
            out.append(re.sub(r'^Types:.*$', 'Types: deb-src', stanza.strip(), flags=re.M))
for path in ['/etc/apt/sources.list'] + sorted(glob.glob('/etc/apt/sources.list.d/*.list')):
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        continue
    for line in lines:
        if re.match(r'^deb\s', line) and 'debian' in line:
            out.append('deb-src' + line[3:])
if not out:
    sys.exit('apt-source: no Debian entries in /etc/apt to derive source entries from')
open(sys.argv[1], 'w').write('\n\n'.join(out) + '\n')
EOF
  local opts=(-o "Dir::Etc::SourceList=$apt/none.list" -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
  apt-get -qq "${opts[@]}" update
  (cd "$work" && apt-get -qq "${opts[@]}" source "$want" >/dev/null)
}
