# Sourced by scripts/install-deps.sh and bench/install-deps.sh: which Debian packages are missing,
# and how to become root to install them.
#   find_missing PACKAGE...   sets the array `missing` to the packages not installed
#   need_root WHO             sets the array `as_root` to () as root, (sudo) otherwise; without
#                             sudo, says what WHO cannot install and exits 1

find_missing() {
  missing=()
  local p status
  for p in "$@"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$p")
  done
}

need_root() {
  as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "$1: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
  fi
}
