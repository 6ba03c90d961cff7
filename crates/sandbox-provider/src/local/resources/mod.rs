//! Resource limits per local wall: processes, memory and CPU. A cgroup per wall where the
//! machine allows it (a delegated cgroup v2 subtree, or cgroup v1 as root), else per-process
//! limits set by the launcher inside the sandbox's user namespace. What is in force, and how,
//! goes into the wall's attestation ([`protocol::ResourceLimits`]).

pub mod cgroup;
pub mod settings;

use paddock_wall::config::{LimitedResource, ResourceRlimit};
use protocol::{LimitMechanism, ResourceLimits};

pub use cgroup::{CgroupSupport, WallCgroup};
pub use settings::{Amount, BadAmount, LimitSettings, Limits, MachineSize};

/// How one wall is limited: its cgroup (if any), the launcher's per-process limits, and the
/// record of what is in force.
#[derive(Debug)]
pub struct WallResources {
    pub cgroup: Option<WallCgroup>,
    pub rlimits: Vec<ResourceRlimit>,
    pub in_force: ResourceLimits,
}

/// The limits of a wall named `name` (the cgroup's name), whose processes run as host uid
/// `host_uid`. `open_files` is the descriptor soft limit the sandbox's processes get back
/// (the host raised its own).
pub fn for_wall(
    support: &CgroupSupport,
    name: &str,
    limits: &Limits,
    host_uid: u32,
    open_files: u64,
) -> WallResources {
    let restore = ResourceRlimit {
        resource: LimitedResource::OpenFiles,
        soft: open_files,
        hard: None,
    };
    let unavailable = match WallCgroup::create(support, name, limits) {
        Ok((cgroup, in_force)) => {
            return WallResources {
                cgroup: Some(cgroup),
                rlimits: vec![restore],
                in_force,
            };
        }
        Err(why) => why,
    };
    let mut rlimits = vec![restore];
    let mut detail = format!("no cgroup ({unavailable}); per-process limits");
    if let Some(memory) = limits.memory_bytes {
        rlimits.push(ResourceRlimit {
            resource: LimitedResource::Data,
            soft: memory,
            hard: Some(memory),
        });
        detail.push_str(": memory is each process's own (RLIMIT_DATA)");
    }
    let processes = match limits.processes {
        // The kernel exempts root's processes from RLIMIT_NPROC, even in a user namespace.
        Some(_) if host_uid == 0 => {
            detail.push_str("; processes are not limited (the sandbox runs as host root)");
            None
        }
        Some(n) => {
            rlimits.push(ResourceRlimit {
                resource: LimitedResource::Processes,
                soft: n,
                hard: Some(n),
            });
            Some(n)
        }
        None => None,
    };
    if limits.cpu_millis.is_some() {
        detail.push_str("; CPU is not limited");
    }
    if limits.swap_bytes.is_some() {
        detail.push_str("; swap is not limited");
    }
    let mechanism = if rlimits.len() > 1 {
        LimitMechanism::Rlimit
    } else {
        LimitMechanism::None
    };
    WallResources {
        cgroup: None,
        rlimits,
        in_force: ResourceLimits {
            mechanism,
            processes,
            memory_bytes: limits.memory_bytes,
            swap_bytes: None,
            cpu_millis: None,
            detail,
        },
    }
}

/// One line for people: `cgroup_v1: 2048 processes, 12.0 GiB memory, no swap, 1.50 CPUs`.
pub fn describe(limits: &ResourceLimits) -> String {
    let count = |n: Option<u64>, what: &str| {
        n.map_or_else(|| format!("{what} unlimited"), |n| format!("{n} {what}"))
    };
    let bytes = |n: Option<u64>, what: &str| match n {
        None => format!("{what} unlimited"),
        Some(0) => format!("no {what}"),
        Some(n) => format!("{:.1} GiB {what}", n as f64 / f64::from(1u32 << 30)),
    };
    let cpu = limits.cpu_millis.map_or_else(
        || "CPU unlimited".to_owned(),
        |m| format!("{:.2} CPUs", m as f64 / 1000.0),
    );
    format!(
        "{}: {}, {}, {}, {cpu}",
        limits.mechanism.as_str(),
        count(limits.processes, "processes"),
        bytes(limits.memory_bytes, "memory"),
        bytes(limits.swap_bytes, "swap"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_cgroup_the_launcher_limits_each_process() {
        let none = CgroupSupport::Unavailable {
            why: "no cgroup here".into(),
        };
        let limits = Limits {
            processes: Some(256),
            memory_bytes: Some(1 << 30),
            swap_bytes: Some(0),
            cpu_millis: Some(1000),
        };
        let user = for_wall(&none, "paddock-wall-1-s-0", &limits, 1000, 1024);
        assert!(user.cgroup.is_none());
        assert_eq!(user.in_force.mechanism, LimitMechanism::Rlimit);
        assert_eq!(user.in_force.processes, Some(256));
        assert_eq!(user.rlimits.len(), 3);
        assert!(
            user.in_force.detail.contains("no cgroup here")
                && user.in_force.detail.contains("CPU is not limited"),
            "{}",
            user.in_force.detail
        );
        let root = for_wall(&none, "paddock-wall-1-s-1", &limits, 0, 1024);
        assert_eq!(root.in_force.processes, None);
        assert!(
            !root
                .rlimits
                .iter()
                .any(|r| r.resource == LimitedResource::Processes)
        );
        assert_eq!(
            describe(&user.in_force),
            "rlimit: 256 processes, 1.0 GiB memory, swap unlimited, CPU unlimited"
        );
    }
}
