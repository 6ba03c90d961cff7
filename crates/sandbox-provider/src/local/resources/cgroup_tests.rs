use std::os::unix::process::ExitStatusExt;

use super::*;

/// A folder laid out like `/sys/fs/cgroup`: `files` are (path below the root, content).
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    root
}

const SCOPE: &str = "user.slice/user-1000.slice/user@1000.service/app.slice/paddock.scope";

fn limits() -> Limits {
    Limits {
        processes: Some(512),
        memory_bytes: Some(256 << 20),
        swap_bytes: Some(0),
        cpu_millis: Some(1500),
    }
}

#[test]
fn a_delegated_v2_cgroup_hands_its_controllers_to_the_walls_from_a_leaf() {
    let root = tree(&[
        (
            &format!("sys/fs/cgroup/{SCOPE}/cgroup.controllers"),
            "cpuset cpu io memory pids\n",
        ),
        (&format!("sys/fs/cgroup/{SCOPE}/cgroup.subtree_control"), ""),
        (&format!("sys/fs/cgroup/{SCOPE}/cgroup.procs"), "4242\n"),
    ]);
    let support = detect(CgroupView {
        mountinfo: "35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
        self_cgroup: &format!("0::/{SCOPE}\n"),
        root: root.path(),
        euid: 1000,
        pid: 4242,
    });
    let base = root.path().join("sys/fs/cgroup").join(SCOPE);
    assert_eq!(
        support,
        CgroupSupport::V2 {
            base: base.clone(),
            controllers: vec![Controller::Pids, Controller::Memory, Controller::Cpu],
        }
    );
    assert_eq!(
        std::fs::read_to_string(base.join(HOST_LEAF).join("cgroup.procs")).unwrap(),
        "4242\n",
        "this process moved into its leaf"
    );
    assert_eq!(
        std::fs::read_to_string(base.join("cgroup.subtree_control")).unwrap(),
        "+pids +memory +cpu"
    );

    let (wall, in_force) =
        WallCgroup::create(&support, "paddock-wall-4242-s-0", &limits()).unwrap();
    let dir = base.join("paddock-wall-4242-s-0");
    let file = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(
        (file("pids.max"), file("memory.max"), file("cpu.max")),
        ("512".into(), "268435456".into(), "150000 100000".into())
    );
    assert_eq!(
        in_force,
        ResourceLimits {
            mechanism: LimitMechanism::CgroupV2,
            processes: Some(512),
            memory_bytes: Some(256 << 20),
            swap_bytes: None,
            cpu_millis: Some(1500),
            detail: format!(
                "cgroup v2 {}; swap is not accounted by this kernel",
                dir.display()
            ),
        }
    );
    assert_eq!(wall.procs_files(), vec![dir.join("cgroup.procs")]);
}

#[test]
fn a_v2_cgroup_offering_only_some_controllers_limits_what_it_can_and_says_so() {
    let root = tree(&[
        (
            &format!("sys/fs/cgroup/{SCOPE}/cgroup.controllers"),
            "memory pids\n",
        ),
        (
            &format!("sys/fs/cgroup/{SCOPE}/cgroup.subtree_control"),
            "memory pids\n",
        ),
    ]);
    let support = detect(CgroupView {
        mountinfo: "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        self_cgroup: &format!("0::/{SCOPE}\n"),
        root: root.path(),
        euid: 1000,
        pid: 7,
    });
    let (_, in_force) = WallCgroup::create(&support, "paddock-wall-7-s-0", &limits()).unwrap();
    assert_eq!(in_force.cpu_millis, None);
    assert_eq!(in_force.processes, Some(512));
    assert!(
        in_force
            .detail
            .contains("not delegated, so not limited: cpu"),
        "{}",
        in_force.detail
    );
}

#[test]
fn without_delegation_a_user_has_no_cgroup_and_is_told_why() {
    let root = tree(&[
        (&format!("sys/fs/cgroup/{SCOPE}/cgroup.controllers"), "\n"),
        (&format!("sys/fs/cgroup/{SCOPE}/cgroup.subtree_control"), ""),
    ]);
    let support = detect(CgroupView {
        mountinfo: "35 24 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
        self_cgroup: &format!("0::/{SCOPE}\n"),
        root: root.path(),
        euid: 1000,
        pid: 7,
    });
    let CgroupSupport::Unavailable { why } = support else {
        panic!("{support:?}");
    };
    assert!(why.contains("Delegate=yes"), "{why}");
    assert!(
        why.contains("cgroup v1 hierarchies are for root only"),
        "{why}"
    );
}

/// This machine's layout in CI: cgroup v1 hierarchies per controller (the memory one nested,
/// as a container's), and a cgroup v2 mount with no controller of ours.
const HYBRID_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 /job /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
const HYBRID_CGROUPS: &str = "8:pids:/\n4:memory:/job/eab6\n2:cpuacct:/\n1:cpu:/\n0::/\n";

fn hybrid(memsw: bool) -> tempfile::TempDir {
    let mut files = vec![
        ("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n"),
        ("sys/fs/cgroup/unified/cgroup.subtree_control", ""),
        ("sys/fs/cgroup/cpu/cgroup.procs", ""),
        ("sys/fs/cgroup/pids/cgroup.procs", ""),
        ("sys/fs/cgroup/memory/eab6/cgroup.procs", ""),
    ];
    if memsw {
        files.push(("sys/fs/cgroup/memory/eab6/memory.memsw.limit_in_bytes", ""));
    }
    tree(&files)
}

#[test]
fn as_root_on_a_hybrid_machine_the_v1_hierarchies_are_used() {
    let root = hybrid(true);
    let support = detect(CgroupView {
        mountinfo: HYBRID_MOUNTS,
        self_cgroup: HYBRID_CGROUPS,
        root: root.path(),
        euid: 0,
        pid: 9,
    });
    let cg = root.path().join("sys/fs/cgroup");
    assert_eq!(
        support,
        CgroupSupport::V1 {
            bases: vec![
                (Controller::Pids, cg.join("pids")),
                (Controller::Memory, cg.join("memory/eab6")),
                (Controller::Cpu, cg.join("cpu")),
            ],
            swap: true,
        }
    );
    let (wall, in_force) = WallCgroup::create(&support, "paddock-wall-9-s-0", &limits()).unwrap();
    let memory = cg.join("memory/eab6/paddock-wall-9-s-0");
    assert_eq!(
        std::fs::read_to_string(memory.join("memory.memsw.limit_in_bytes")).unwrap(),
        (256u64 << 20).to_string()
    );
    assert_eq!(
        std::fs::read_to_string(cg.join("cpu/paddock-wall-9-s-0/cpu.cfs_quota_us")).unwrap(),
        "150000"
    );
    assert_eq!(
        (
            in_force.mechanism,
            in_force.processes,
            in_force.memory_bytes
        ),
        (LimitMechanism::CgroupV1, Some(512), Some(256 << 20))
    );
    assert_eq!(
        (in_force.swap_bytes, in_force.cpu_millis),
        (Some(0), Some(1500))
    );
    assert_eq!(in_force.detail, "cgroup v1 (pids, memory, cpu) as root");
    assert_eq!(wall.procs_files().len(), 3);

    // Without swap accounting the record says swap is not limited.
    let root = hybrid(false);
    let support = detect(CgroupView {
        mountinfo: HYBRID_MOUNTS,
        self_cgroup: HYBRID_CGROUPS,
        root: root.path(),
        euid: 0,
        pid: 9,
    });
    let (_, in_force) = WallCgroup::create(&support, "paddock-wall-9-s-1", &limits()).unwrap();
    assert_eq!(in_force.swap_bytes, None);
    assert!(
        in_force.detail.contains("swap is not accounted"),
        "{}",
        in_force.detail
    );
}

#[test]
fn a_user_on_a_hybrid_machine_has_no_cgroup() {
    let root = hybrid(true);
    let support = detect(CgroupView {
        mountinfo: HYBRID_MOUNTS,
        self_cgroup: HYBRID_CGROUPS,
        root: root.path(),
        euid: 1000,
        pid: 9,
    });
    let CgroupSupport::Unavailable { why } = support else {
        panic!("{support:?}");
    };
    assert!(why.contains("offers none of pids, memory, cpu"), "{why}");
}

/// The cgroup v2 mechanics against the real kernel, with no controller (this machine's v2
/// hierarchy has none of ours): a process joins, is found there, and removing the cgroup kills
/// it first. Needs root, as the suite runs in CI.
#[test]
fn a_real_v2_cgroup_is_joined_checked_and_removed_with_its_processes() {
    assert_eq!(
        paddock_wall::privileges::effective_uid(),
        0,
        "this test makes a cgroup in the machine's cgroup v2 hierarchy: run it as root"
    );
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let self_cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let all = mounts(&mountinfo);
    let mount = all
        .iter()
        .find(|m| m.fstype == "cgroup2")
        .expect("a cgroup v2 hierarchy is mounted");
    let path = self_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap();
    let base = folder(Path::new("/"), mount, path);
    let support = CgroupSupport::V2 {
        base,
        controllers: Vec::new(),
    };
    let name = format!("{WALL_PREFIX}{}-kernel-test", std::process::id());
    let (wall, _) = WallCgroup::create(&support, &name, &limits()).unwrap();
    let mut child = std::process::Command::new("sleep")
        .arg("600")
        .spawn()
        .unwrap();
    std::fs::write(&wall.procs_files()[0], child.id().to_string()).unwrap();
    wall.holds(child.id()).unwrap();
    assert!(wall.holds(std::process::id()).is_err());
    wall.remove().unwrap();
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    assert!(!wall.dirs[0].exists());
}
