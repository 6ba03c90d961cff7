//! Hostile commands that more than one suite runs inside a wall.

/// Fills the sandbox's process table from a background process whose output goes elsewhere
/// (so the runner leaves it running, as a shell would): it forks sleepers and, whenever a
/// place frees, takes it again. Prints `started` once the table has had a second to fill.
/// The wait is the Python parent's, not the shell's: once the table is full a `sleep` of the
/// shell's could not start (on a loaded machine the grabber fills it within that second),
/// and `echo` is a builtin.
pub const PROCESS_GRABBER: &str = r#"python3 - <<'PY'
import os, time
fd = os.open('/dev/null', os.O_RDWR)
for i in (0, 1, 2):
    os.dup2(fd, i)
if os.fork() == 0:
    while True:
        try:
            pid = os.fork()
        except OSError:
            time.sleep(0.001)
            continue
        if pid == 0:
            time.sleep(100000)
            os._exit(0)
time.sleep(1)
PY
echo started"#;
