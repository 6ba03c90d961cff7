//! cgroups for the walls: where this process may make them (a cgroup v2 subtree delegated to
//! it, or the cgroup v1 hierarchies when it is root), one cgroup per wall with its limits
//! written and read back (the launcher joins it before bubblewrap starts), and its removal,
//! every process in it killed first, at close or when an orphan is found.
//!
//! Every path is taken below a root (`/` in production), so the tests lay a cgroup tree out in
//! a folder; the kernel's own rules (a cgroup v2 with processes cannot hand controllers to its
//! children) are what [`setup_v2`] works around by moving this process into a leaf.

use std::path::{Path, PathBuf};
use std::time::Duration;

use protocol::{LimitMechanism, ResourceLimits};

use super::settings::Limits;

/// Wall cgroups are named `paddock-` and the wall's folder name (`wall-<pid>-…`).
pub const WALL_PREFIX: &str = "paddock-wall-";
/// The leaf this process moves into so its own cgroup v2 may hand controllers to the walls'.
pub const HOST_LEAF: &str = "paddock-host";
/// cgroup CPU bandwidth period, in microseconds.
const CPU_PERIOD_US: u64 = 100_000;
/// A cgroup v1 memory limit at or above this is the kernel's "unlimited".
const V1_UNLIMITED: u64 = 1 << 62;

/// A controller a wall's cgroup uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Controller {
    Pids,
    Memory,
    Cpu,
}

impl Controller {
    pub const ALL: [Controller; 3] = [Controller::Pids, Controller::Memory, Controller::Cpu];

    pub fn name(self) -> &'static str {
        match self {
            Controller::Pids => "pids",
            Controller::Memory => "memory",
            Controller::Cpu => "cpu",
        }
    }
}

/// Where this process makes its walls' cgroups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupSupport {
    /// Under `base`, whose `cgroup.subtree_control` enables `controllers` for the walls.
    V2 {
        base: PathBuf,
        controllers: Vec<Controller>,
    },
    /// In each hierarchy's `base` (this process's own cgroup there); `swap` when the kernel
    /// accounts swap (`memory.memsw.*`).
    V1 {
        bases: Vec<(Controller, PathBuf)>,
        swap: bool,
    },
    /// No cgroup can be made; why, in plain words.
    Unavailable { why: String },
}

/// What the detection reads. In production: `/proc/self/mountinfo`, `/proc/self/cgroup`,
/// the root folder `/`, this process's effective uid and pid.
#[derive(Debug, Clone, Copy)]
pub struct CgroupView<'a> {
    pub mountinfo: &'a str,
    pub self_cgroup: &'a str,
    pub root: &'a Path,
    pub euid: u32,
    pub pid: u32,
}

struct Mount<'a> {
    root: &'a str,
    point: &'a str,
    fstype: &'a str,
    super_options: Vec<&'a str>,
}

fn mounts(mountinfo: &str) -> Vec<Mount<'_>> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let fstype = right.next()?;
            let _source = right.next()?;
            Some(Mount {
                root: fields.get(3)?,
                point: fields.get(4)?,
                fstype,
                super_options: right.next().unwrap_or_default().split(',').collect(),
            })
        })
        .collect()
}

/// The folder of cgroup `path` in the hierarchy mounted at `mount`, below `root`.
fn folder(root: &Path, mount: &Mount<'_>, path: &str) -> PathBuf {
    let inside = if mount.root == "/" {
        path
    } else {
        path.strip_prefix(mount.root).unwrap_or(path)
    };
    root.join(mount.point.trim_start_matches('/'))
        .join(inside.trim_start_matches('/'))
}

/// Finds where this process may make its walls' cgroups: cgroup v2 first, then v1.
pub fn detect(view: CgroupView<'_>) -> CgroupSupport {
    let v2 = setup_v2(view);
    let v2_problem = match v2 {
        Ok(support) => return support,
        Err(problem) => problem,
    };
    match find_v1(view) {
        Ok(support) => support,
        Err(v1_problem) => CgroupSupport::Unavailable {
            why: format!("{v2_problem}; {v1_problem}"),
        },
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("writing {text:?} to {}: {e}", path.display()))
}

/// cgroup v2: this process's cgroup must offer the controllers and belong to this user; its
/// children get them once this process has moved into a leaf of its own ([`HOST_LEAF`]),
/// which works when nothing else runs in that cgroup (a service or scope of its own).
fn setup_v2(view: CgroupView<'_>) -> Result<CgroupSupport, String> {
    let all = mounts(view.mountinfo);
    let mount = all
        .iter()
        .find(|m| m.fstype == "cgroup2")
        .ok_or("no cgroup v2 hierarchy is mounted")?;
    let path = view
        .self_cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("this process is in no cgroup v2")?;
    let dir = folder(view.root, mount, path);
    let offered = read(&dir.join("cgroup.controllers"))?;
    let controllers: Vec<Controller> = Controller::ALL
        .into_iter()
        .filter(|c| offered.split_whitespace().any(|o| o == c.name()))
        .collect();
    if controllers.is_empty() {
        return Err(format!(
            "cgroup v2: {} offers none of pids, memory, cpu (a systemd unit gets them with \
             Delegate=yes)",
            dir.display()
        ));
    }
    let at_root = path == "/";
    if at_root && view.euid != 0 {
        return Err(
            "cgroup v2: this process is in the root cgroup, which only root may divide".into(),
        );
    }
    let enabled = read(&dir.join("cgroup.subtree_control"))?;
    if controllers
        .iter()
        .all(|c| enabled.split_whitespace().any(|e| e == c.name()))
    {
        return Ok(CgroupSupport::V2 {
            base: dir,
            controllers,
        });
    }
    let leaf = dir.join(HOST_LEAF);
    if !at_root {
        match std::fs::create_dir(&leaf) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(format!(
                    "cgroup v2: {} is not delegated to this user ({e})",
                    dir.display()
                ));
            }
        }
        write(&leaf.join("cgroup.procs"), &format!("{}\n", view.pid))
            .map_err(|e| format!("cgroup v2: moving this process into its own leaf: {e}"))?;
    }
    let wanted: Vec<String> = controllers
        .iter()
        .map(|c| format!("+{}", c.name()))
        .collect();
    if let Err(e) = write(&dir.join("cgroup.subtree_control"), &wanted.join(" ")) {
        if !at_root {
            let _ = write(&dir.join("cgroup.procs"), &format!("{}\n", view.pid));
            let _ = std::fs::remove_dir(&leaf);
        }
        return Err(format!(
            "cgroup v2: {e}; other processes share this process's cgroup, so it cannot hand \
             controllers to the sandboxes (run Paddock in a cgroup of its own, e.g. \
             `systemd-run --user --scope -p Delegate=yes paddock …`)"
        ));
    }
    Ok(CgroupSupport::V2 {
        base: dir,
        controllers,
    })
}

/// cgroup v1 (root only): a cgroup per wall in this process's own cgroup of each hierarchy.
fn find_v1(view: CgroupView<'_>) -> Result<CgroupSupport, String> {
    if view.euid != 0 {
        return Err("cgroup v1 hierarchies are for root only".into());
    }
    let all = mounts(view.mountinfo);
    let mut bases = Vec::new();
    for controller in Controller::ALL {
        let Some(mount) = all
            .iter()
            .find(|m| m.fstype == "cgroup" && m.super_options.contains(&controller.name()))
        else {
            continue;
        };
        let Some(path) = view.self_cgroup.lines().find_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
            names
                .split(',')
                .any(|n| n == controller.name())
                .then_some(path)
        }) else {
            continue;
        };
        let base = folder(view.root, mount, path);
        if base.is_dir() {
            bases.push((controller, base));
        }
    }
    if bases.is_empty() {
        return Err("no cgroup v1 hierarchy of pids, memory or cpu is mounted".into());
    }
    let swap = bases.iter().any(|(c, base)| {
        *c == Controller::Memory && base.join("memory.memsw.limit_in_bytes").exists()
    });
    Ok(CgroupSupport::V1 { bases, swap })
}

impl CgroupSupport {
    /// This process's, found once (a cgroup v2 set-up moves the process into its leaf).
    pub fn this_process() -> CgroupSupport {
        static SUPPORT: std::sync::OnceLock<CgroupSupport> = std::sync::OnceLock::new();
        SUPPORT
            .get_or_init(|| {
                let (Ok(mountinfo), Ok(self_cgroup)) = (
                    std::fs::read_to_string("/proc/self/mountinfo"),
                    std::fs::read_to_string("/proc/self/cgroup"),
                ) else {
                    return CgroupSupport::Unavailable {
                        why: "/proc/self/mountinfo or /proc/self/cgroup is unreadable".into(),
                    };
                };
                detect(CgroupView {
                    mountinfo: &mountinfo,
                    self_cgroup: &self_cgroup,
                    root: Path::new("/"),
                    euid: paddock_wall::privileges::effective_uid(),
                    pid: std::process::id(),
                })
            })
            .clone()
    }

    /// The folders wall cgroups are made in.
    fn bases(&self) -> Vec<PathBuf> {
        match self {
            CgroupSupport::V2 { base, .. } => vec![base.clone()],
            CgroupSupport::V1 { bases, .. } => bases.iter().map(|(_, b)| b.clone()).collect(),
            CgroupSupport::Unavailable { .. } => Vec::new(),
        }
    }
}

/// Processes in a wall's cgroup against its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessPressure {
    pub current: u64,
    pub max: u64,
}

/// One wall's cgroup (a folder per hierarchy for v1).
#[derive(Debug, Clone)]
pub struct WallCgroup {
    dirs: Vec<PathBuf>,
}

fn v2_value(limit: Option<u64>) -> String {
    limit.map_or_else(|| "max".to_owned(), |n| n.to_string())
}

fn number(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

impl WallCgroup {
    /// Makes the cgroup `name` with `limits`, reads them back, and says what is in force.
    pub fn create(
        support: &CgroupSupport,
        name: &str,
        limits: &Limits,
    ) -> Result<(WallCgroup, ResourceLimits), String> {
        let mut made = WallCgroup { dirs: Vec::new() };
        let result = match support {
            CgroupSupport::V2 { base, controllers } => {
                made.create_v2(&base.join(name), controllers, limits)
            }
            CgroupSupport::V1 { bases, swap } => made.create_v1(bases, *swap, name, limits),
            CgroupSupport::Unavailable { why } => Err(why.clone()),
        };
        match result {
            Ok(in_force) => Ok((made, in_force)),
            Err(e) => {
                let _ = made.remove();
                Err(e)
            }
        }
    }

    fn make(&mut self, dir: PathBuf) -> Result<PathBuf, String> {
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        self.dirs.push(dir.clone());
        Ok(dir)
    }

    fn create_v2(
        &mut self,
        dir: &Path,
        controllers: &[Controller],
        limits: &Limits,
    ) -> Result<ResourceLimits, String> {
        let dir = self.make(dir.to_path_buf())?;
        let has = |c: Controller| controllers.contains(&c);
        if has(Controller::Pids) {
            write(&dir.join("pids.max"), &v2_value(limits.processes))?;
        }
        if has(Controller::Memory) {
            write(&dir.join("memory.max"), &v2_value(limits.memory_bytes))?;
            if dir.join("memory.swap.max").exists() {
                write(&dir.join("memory.swap.max"), &v2_value(limits.swap_bytes))?;
            }
        }
        if has(Controller::Cpu) {
            let quota = limits.cpu_millis.map_or_else(
                || "max".to_owned(),
                |m| (m * CPU_PERIOD_US / 1000).to_string(),
            );
            write(&dir.join("cpu.max"), &format!("{quota} {CPU_PERIOD_US}"))?;
        }
        let read_limit = |file: &str| -> Result<Option<u64>, String> {
            let path = dir.join(file);
            if !path.exists() {
                return Ok(None);
            }
            Ok(number(&read(&path)?))
        };
        let cpu_millis = if has(Controller::Cpu) {
            let text = read(&dir.join("cpu.max"))?;
            let mut parts = text.split_whitespace();
            match (parts.next().and_then(number), parts.next().and_then(number)) {
                (Some(quota), Some(period)) if period > 0 => Some(quota * 1000 / period),
                _ => None,
            }
        } else {
            None
        };
        let missing: Vec<&str> = Controller::ALL
            .into_iter()
            .filter(|c| !has(*c))
            .map(Controller::name)
            .collect();
        let swap_bytes = if has(Controller::Memory) {
            read_limit("memory.swap.max")?
        } else {
            None
        };
        let mut detail = format!("cgroup v2 {}", dir.display());
        if !missing.is_empty() {
            detail.push_str(&format!(
                "; not delegated, so not limited: {}",
                missing.join(", ")
            ));
        }
        if has(Controller::Memory) && !dir.join("memory.swap.max").exists() {
            detail.push_str("; swap is not accounted by this kernel");
        }
        Ok(ResourceLimits {
            mechanism: LimitMechanism::CgroupV2,
            processes: if has(Controller::Pids) {
                read_limit("pids.max")?
            } else {
                None
            },
            memory_bytes: if has(Controller::Memory) {
                read_limit("memory.max")?
            } else {
                None
            },
            swap_bytes,
            cpu_millis,
            detail,
        })
    }

    fn create_v1(
        &mut self,
        bases: &[(Controller, PathBuf)],
        swap: bool,
        name: &str,
        limits: &Limits,
    ) -> Result<ResourceLimits, String> {
        let mut in_force = ResourceLimits {
            mechanism: LimitMechanism::CgroupV1,
            processes: None,
            memory_bytes: None,
            swap_bytes: None,
            cpu_millis: None,
            detail: String::new(),
        };
        let mut used = Vec::new();
        for (controller, base) in bases {
            let dir = self.make(base.join(name))?;
            used.push(controller.name());
            match controller {
                Controller::Pids => {
                    write(&dir.join("pids.max"), &v2_value(limits.processes))?;
                    in_force.processes = number(&read(&dir.join("pids.max"))?);
                }
                Controller::Memory => {
                    let memory = limits.memory_bytes.map_or(-1, |m| m as i64);
                    write(&dir.join("memory.limit_in_bytes"), &memory.to_string())?;
                    let read_back = number(&read(&dir.join("memory.limit_in_bytes"))?)
                        .filter(|m| *m < V1_UNLIMITED);
                    in_force.memory_bytes = read_back;
                    if swap {
                        let total = match (limits.memory_bytes, limits.swap_bytes) {
                            (Some(m), Some(s)) => (m + s) as i64,
                            _ => -1,
                        };
                        write(&dir.join("memory.memsw.limit_in_bytes"), &total.to_string())?;
                        let both = number(&read(&dir.join("memory.memsw.limit_in_bytes"))?)
                            .filter(|m| *m < V1_UNLIMITED);
                        in_force.swap_bytes = match (both, read_back) {
                            (Some(both), Some(memory)) => Some(both.saturating_sub(memory)),
                            _ => None,
                        };
                    }
                }
                Controller::Cpu => {
                    write(&dir.join("cpu.cfs_period_us"), &CPU_PERIOD_US.to_string())?;
                    let quota = limits
                        .cpu_millis
                        .map_or(-1, |m| (m * CPU_PERIOD_US / 1000) as i64);
                    write(&dir.join("cpu.cfs_quota_us"), &quota.to_string())?;
                    let quota = read(&dir.join("cpu.cfs_quota_us"))?;
                    in_force.cpu_millis = quota
                        .trim()
                        .parse::<i64>()
                        .ok()
                        .filter(|q| *q > 0)
                        .map(|q| q as u64 * 1000 / CPU_PERIOD_US);
                }
            }
        }
        let mut detail = format!("cgroup v1 ({}) as root", used.join(", "));
        let missing: Vec<&str> = Controller::ALL
            .into_iter()
            .filter(|c| !bases.iter().any(|(b, _)| b == c))
            .map(Controller::name)
            .collect();
        if !missing.is_empty() {
            detail.push_str(&format!("; no hierarchy for {}", missing.join(", ")));
        }
        if !swap && bases.iter().any(|(c, _)| *c == Controller::Memory) {
            detail.push_str("; swap is not accounted by this kernel (no memory.memsw)");
        }
        in_force.detail = detail;
        Ok(in_force)
    }

    /// The folder holding `pids.max` (the one folder on v2, the pids hierarchy's on v1).
    fn pids_dir(&self) -> Option<&Path> {
        self.dirs
            .iter()
            .find(|d| d.join("pids.max").exists())
            .map(PathBuf::as_path)
    }

    /// Forks the cgroup has refused at its process limit since it was made (`pids.events`).
    pub fn refused_forks(&self) -> Option<u64> {
        let text = read(&self.pids_dir()?.join("pids.events")).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix("max ").and_then(number))
    }

    /// How close the cgroup is to its process limit, when it has one.
    pub fn process_pressure(&self) -> Option<ProcessPressure> {
        let dir = self.pids_dir()?;
        Some(ProcessPressure {
            current: number(&read(&dir.join("pids.current")).ok()?)?,
            max: number(&read(&dir.join("pids.max")).ok()?)?,
        })
    }

    /// Kills every process of the cgroup but `keep` (the wall's own: bubblewrap, the runner,
    /// the bridge), with the process limit lowered meanwhile so none can fork again; returns
    /// how many were killed.
    pub fn stop_all_but(&self, keep: &[u32]) -> Result<usize, String> {
        let dir = self
            .pids_dir()
            .ok_or("the wall's cgroup has no process limit")?;
        let limit = dir.join("pids.max");
        let saved = read(&limit)?;
        write(&limit, "1")?;
        let mut killed = std::collections::BTreeSet::new();
        let mut result = Ok(());
        for _ in 0..100 {
            let procs = match read(&dir.join("cgroup.procs")) {
                Ok(procs) => procs,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            };
            let strays: Vec<u32> = procs
                .lines()
                .filter_map(|l| l.trim().parse().ok())
                .filter(|pid| !keep.contains(pid))
                .collect();
            if strays.is_empty() {
                break;
            }
            for pid in strays {
                // SAFETY: kill with plain integers; a pid already gone answers ESRCH.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                killed.insert(pid);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        write(&limit, saved.trim())?;
        result.map(|()| killed.len())
    }

    /// The processes in the cgroup now.
    pub fn processes(&self) -> Result<Vec<u32>, String> {
        let dir = self.dirs.first().ok_or("the wall's cgroup has no folder")?;
        Ok(read(&dir.join("cgroup.procs"))?
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect())
    }

    /// The `cgroup.procs` files the launcher writes its pid to.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Checks that process `pid` is in every folder of the cgroup.
    pub fn holds(&self, pid: u32) -> Result<(), String> {
        let wanted = pid.to_string();
        for dir in &self.dirs {
            let procs = read(&dir.join("cgroup.procs"))?;
            if !procs.lines().any(|l| l.trim() == wanted) {
                return Err(format!(
                    "the wall's process {pid} is not in {}",
                    dir.display()
                ));
            }
        }
        Ok(())
    }

    /// Kills every process in the cgroup and removes it, waiting for them to exit: up to
    /// [`REMOVE_PATIENCE`], since a killed process holding many sockets or much memory takes
    /// a while to go on a loaded machine (two seconds proved too short on two busy cores).
    pub fn remove(&self) -> Result<(), String> {
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            let mut left = false;
            for dir in &self.dirs {
                if !dir.exists() {
                    continue;
                }
                let kill = dir.join("cgroup.kill");
                if kill.exists() {
                    let _ = std::fs::write(&kill, "1");
                }
                if let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) {
                    for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                        // SAFETY: kill with plain integers; a pid that is already gone
                        // answers ESRCH.
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                    }
                }
                match std::fs::remove_dir(dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(_) => left = true,
                }
            }
            if !left {
                return Ok(());
            }
            if started.elapsed() >= REMOVE_PATIENCE {
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        Err(format!(
            "the cgroup {} still holds processes {} s after they were killed",
            self.dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            REMOVE_PATIENCE.as_secs()
        ))
    }
}

/// How long [`WallCgroup::remove`] waits for killed processes to leave.
pub const REMOVE_PATIENCE: Duration = Duration::from_secs(30);

/// Removes the cgroup `name` (every process in it killed first) wherever this process makes
/// wall cgroups. `Ok(false)`: there was none. Orphan reaping calls it for the walls it found
/// orphaned (see `local::reaping`): a cgroup is never judged on its own.
pub fn remove_named(support: &CgroupSupport, name: &str) -> Result<bool, String> {
    let dirs: Vec<PathBuf> = support.bases().iter().map(|b| b.join(name)).collect();
    if !dirs.iter().any(|d| d.exists()) {
        return Ok(false);
    }
    WallCgroup { dirs }.remove().map(|()| true)
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
