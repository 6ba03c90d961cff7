# Every system call that can put a set-uid or set-gid bit on a new or existing file, each tried
# twice in the folder argv[1]: with a plain mode, which must work (it proves the call, its
# number and its arguments are right), and with a set-id mode, which a confined command must
# be refused with EPERM. `openat2` must answer ENOSYS whatever the mode (its mode sits in
# memory a filter cannot read). argv[2] is a JSON object of this architecture's system-call
# numbers (`open`, `creat`, `mknod`, `mkdir` and `chmod` exist on x86_64 only and are left
# out elsewhere). Afterwards no file below argv[1] may carry a set-id bit.
#
# Prints `<call> <plain|setid> <return value> <errno>` per try, `ESCAPED …` for a set-id try
# that was not refused (or a set-id file found), `BROKEN …` for a plain try that failed (the
# check would prove nothing), and finally `checked <n> calls`.
import ctypes, errno, json, os, struct, sys

libc = ctypes.CDLL(None, use_errno=True)
work = sys.argv[1]
NR = json.loads(sys.argv[2])
AT_FDCWD = -100
AT_SYMLINK_FOLLOW = 0x400
O_TMPFILE = getattr(os, "O_TMPFILE", 0o20200000)
S_IFREG = 0o100000
checked = 0


def raw(name, *args):
    conv = [ctypes.c_char_p(a) if isinstance(a, bytes) else ctypes.c_long(a) for a in args]
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(NR[name]), *conv)
    return rc, (ctypes.get_errno() if rc < 0 else 0)


def path(name):
    return os.path.join(work, name).encode()


def expect(call, kind, result, opened=False, plain_errnos=()):
    """Judges one try: a set-id try must fail with EPERM, a plain one succeed (or fail with
    one of `plain_errnos`, e.g. ENOSYS for a call the kernel may lack)."""
    global checked
    rc, err = result
    print(call, kind, rc, err, flush=True)
    if opened and rc >= 0:
        os.close(rc)
    checked += 1
    if kind == "setid" and not (rc < 0 and err == errno.EPERM):
        print("ESCAPED", call, "with a set-id mode:", rc, err, flush=True)
    if kind == "plain" and rc < 0 and err not in plain_errnos:
        print("BROKEN", call, "failed with a plain mode:", err, flush=True)


creating = [("openat", True)]
if "open" in NR:
    creating.append(("open", False))
for call, at in creating:
    for kind, mode in (("plain", 0o755), ("setid", 0o4755)):
        flags = os.O_CREAT | os.O_WRONLY
        name = path(f"{call}-{kind}")
        args = (AT_FDCWD, name, flags, mode) if at else (name, flags, mode)
        expect(call, kind, raw(call, *args), opened=True)
if "creat" in NR:
    for kind, mode in (("plain", 0o755), ("setid", 0o2755)):
        expect("creat", kind, raw("creat", path(f"creat-{kind}"), mode), opened=True)

# openat2 never runs, whatever the mode.
for kind, mode in (("plain", 0o755), ("setid", 0o4755)):
    how = ctypes.create_string_buffer(struct.pack("QQQ", os.O_CREAT | os.O_WRONLY, mode, 0))
    rc, err = raw("openat2", AT_FDCWD, path(f"openat2-{kind}"), ctypes.addressof(how), 24)
    print("openat2", kind, rc, err, flush=True)
    checked += 1
    if rc >= 0:
        os.close(rc)
    if err != errno.ENOSYS:
        print("ESCAPED openat2 ran:", rc, err, flush=True)

# O_TMPFILE: an unnamed file made with a set-id mode (or given one), then linked in.
for kind, mode in (("plain", 0o755), ("setid", 0o4755)):
    rc, err = raw("openat", AT_FDCWD, work.encode(), O_TMPFILE | os.O_WRONLY, mode)
    expect("openat(O_TMPFILE)", kind, (rc, err))
    if rc >= 0:
        if kind == "plain":
            expect("fchmod(O_TMPFILE)", "setid", raw("fchmod", rc, 0o4755))
        linked = raw("linkat", AT_FDCWD, f"/proc/self/fd/{rc}".encode(), AT_FDCWD,
                     path(f"tmpfile-{kind}"), AT_SYMLINK_FOLLOW)
        expect("linkat(O_TMPFILE)", "plain", linked)
        os.close(rc)

for call in ("mknod", "mknodat"):
    if call not in NR:
        continue
    for kind, mode in (("plain", 0o755), ("setid", 0o4755)):
        name = path(f"{call}-{kind}")
        args = (name, S_IFREG | mode, 0) if call == "mknod" else (AT_FDCWD, name, S_IFREG | mode, 0)
        expect(call, kind, raw(call, *args))

for call in ("mkdir", "mkdirat"):
    if call not in NR:
        continue
    for kind, mode in (("plain", 0o755), ("setid", 0o2755)):
        name = path(f"{call}-{kind}")
        args = (name, mode) if call == "mkdir" else (AT_FDCWD, name, mode)
        expect(call, kind, raw(call, *args))

# Changing the mode of a file that exists.
os.close(os.open(os.path.join(work, "target"), os.O_CREAT | os.O_WRONLY, 0o755))
target = path("target")
for kind, mode in (("plain", 0o755), ("setid", 0o4755)):
    if "chmod" in NR:
        expect("chmod", kind, raw("chmod", target, mode))
    fd = os.open(target, os.O_RDONLY)
    expect("fchmod", kind, raw("fchmod", fd, mode | (0o2000 if kind == "setid" else 0)))
    os.close(fd)
    expect("fchmodat", kind, raw("fchmodat", AT_FDCWD, target, mode))
    # fchmodat2 (Linux 6.6): a kernel without it answers ENOSYS to the plain mode.
    expect("fchmodat2", kind, raw("fchmodat2", AT_FDCWD, target, mode, 0),
           plain_errnos=(errno.ENOSYS,))

for folder, _, files in os.walk(work):
    for name in files:
        mode = os.lstat(os.path.join(folder, name)).st_mode
        if mode & 0o6000:
            print("ESCAPED set-id file", os.path.join(folder, name), oct(mode), flush=True)
print("checked", checked, "calls", flush=True)
