# Sourced by the setup scripts: apt_install "command:package" ... installs the Debian packages named whose command
# is missing (with sudo when not root), nothing when every command is there.
apt_install() {
  local need=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  echo "setup: apt-get install ${need[*]}"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
}
