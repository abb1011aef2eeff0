# Sourced by build-image.sh and up.sh: podman's defaults, adjusted where this host needs it
# (a sandbox or a CI runner rather than a plain server):
#  - without CAP_SYS_RESOURCE, no process may raise a hard limit, and podman's defaults for
#    root (a million open files, four million processes) are refused at container start
#    ("setrlimit RLIMIT_NOFILE: Operation not permitted"): the containers get this shell's;
#  - cgroups in hybrid mode (v1 controllers beside a v2 tree) are refused by crun
#    ("cgroups in hybrid mode not supported"): runc runs the containers then.
# Nothing changes on a host that needs neither.

_arena_conf=""
_arena_caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
# CAP_SYS_RESOURCE is capability 24
if [ -n "$_arena_caps" ] && [ $(( 0x$_arena_caps >> 24 & 1 )) -eq 0 ]; then
    _arena_nproc=$(ulimit -Hu)
    _arena_pid_max=$(cat /proc/sys/kernel/pid_max)
    case $_arena_nproc in unlimited) _arena_nproc=$_arena_pid_max ;; esac
    [ "$_arena_nproc" -gt "$_arena_pid_max" ] && _arena_nproc=$_arena_pid_max
    _arena_conf="[containers]
default_ulimits = [\"nofile=$(ulimit -Hn):$(ulimit -Hn)\", \"nproc=$_arena_nproc:$_arena_nproc\"]
"
fi
if [ -d /sys/fs/cgroup/unified ] && command -v runc >/dev/null; then
    _arena_conf="$_arena_conf[engine]
runtime = \"runc\"
"
fi
if [ -n "$_arena_conf" ]; then
    CONTAINERS_CONF=${TMPDIR:-/tmp}/arena-containers-$(id -u).conf  # one file, rewritten
    printf '%s' "$_arena_conf" > "$CONTAINERS_CONF"
    export CONTAINERS_CONF
fi
unset _arena_conf _arena_caps _arena_nproc _arena_pid_max
