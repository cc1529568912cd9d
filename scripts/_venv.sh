# Sourced by scripts/run and scripts/test: create or refresh .venv only when needed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"

# ensure_venv [extras]: make .venv hold moot (editable) and, with "dev", the test tools.
ensure_venv() {
  local extras="${1:-}"
  local python="${MOOT_PYTHON:-python3.11}"
  command -v "$python" >/dev/null 2>&1 || python=python3
  # The stamp records which pyproject the venv was built from and with which extras; when it
  # matches, no pip runs at all, so a second scripts/run or scripts/test starts at once.
  local hash stamp="$venv/.moot-stamp" have_hash="" have_extras=""
  hash="$(sha256sum "$root/pyproject.toml" | cut -c1-16)"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp" ]; then
    read -r have_hash have_extras <"$stamp" || true
    if [ "$have_hash" = "$hash" ] && { [ -z "$extras" ] || [ "$have_extras" = "$extras" ]; }; then
      return 0
    fi
  fi
  # A venv that had the dev tools keeps them, so scripts/run and scripts/test do not take
  # turns reinstalling.
  [ -z "$extras" ] && extras="$have_extras"
  if [ ! -x "$venv/bin/python" ]; then
    echo "moot: creating $venv" >&2
    "$python" -m venv "$venv"
  fi
  echo "moot: installing dependencies into $venv" >&2
  local spec="$root"
  [ -n "$extras" ] && spec="$root[$extras]"
  "$venv/bin/python" -m pip install --quiet -e "$spec" >&2
  echo "$hash $extras" >"$stamp"
}
