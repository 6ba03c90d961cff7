//! The resource limits of a sandbox as the machine's configuration states them (`[sandbox.
//! limits]`), and the concrete numbers they come to on this machine. Pure apart from
//! [`MachineSize::this_machine`].

/// How much of a resource one sandbox may use, as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// Not limited.
    Unlimited,
    /// An absolute amount: processes, bytes, or thousandths of a CPU.
    Exactly(u64),
    /// A share of the machine's total, in percent (1 to 100).
    Percent(u8),
}

impl Amount {
    /// The amount on a machine with `total` of the resource (`None`: not limited).
    pub fn of(self, total: u64) -> Option<u64> {
        match self {
            Amount::Unlimited => None,
            Amount::Exactly(n) => Some(n),
            Amount::Percent(p) => {
                Some(total / 100 * u64::from(p) + total % 100 * u64::from(p) / 100)
            }
        }
    }
}

/// A configured limit that cannot be used, with what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` {problem}")]
pub struct BadAmount {
    pub text: String,
    pub problem: String,
}

fn bad(text: &str, problem: &str) -> BadAmount {
    BadAmount {
        text: text.to_owned(),
        problem: problem.to_owned(),
    }
}

fn percent(text: &str) -> Option<Result<Amount, BadAmount>> {
    let number = text.strip_suffix('%')?;
    Some(match number.trim().parse::<u8>() {
        Ok(p) if (1..=100).contains(&p) => Ok(Amount::Percent(p)),
        _ => Err(bad(text, "is not a percentage from 1% to 100%")),
    })
}

/// A process count: a whole number of at least 16, or `unlimited`.
pub fn parse_processes(text: &str) -> Result<Amount, BadAmount> {
    let text = text.trim();
    if text == "unlimited" {
        return Ok(Amount::Unlimited);
    }
    match text.parse::<u64>() {
        Ok(n) if n >= 16 => Ok(Amount::Exactly(n)),
        _ => Err(bad(
            text,
            "is not a number of processes (16 or more) or `unlimited`",
        )),
    }
}

/// A size: bytes with an optional unit (`512MiB`, `4GiB`, `4G`, `1048576`), a share of the
/// machine's memory (`50%`), or `unlimited`.
pub fn parse_bytes(text: &str) -> Result<Amount, BadAmount> {
    let text = text.trim();
    if text == "unlimited" {
        return Ok(Amount::Unlimited);
    }
    if let Some(share) = percent(text) {
        return share;
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "T" | "TiB" => 1 << 40,
        _ => return Err(bad(text, "has a unit other than B, KiB, MiB, GiB or TiB")),
    };
    number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .map(Amount::Exactly)
        .ok_or_else(|| {
            bad(
                text,
                "is not a size such as `512MiB`, `4GiB`, `50%` or `unlimited`",
            )
        })
}

/// CPU time: a number of CPUs (`1.5`), a share of all the machine's CPUs (`75%`), or
/// `unlimited`. Stored in thousandths of a CPU.
pub fn parse_cpus(text: &str) -> Result<Amount, BadAmount> {
    let text = text.trim();
    if text == "unlimited" {
        return Ok(Amount::Unlimited);
    }
    if let Some(share) = percent(text) {
        return share;
    }
    match text.parse::<f64>() {
        Ok(cpus) if cpus.is_finite() && (0.01..=4096.0).contains(&cpus) => {
            Ok(Amount::Exactly((cpus * 1000.0).round() as u64))
        }
        _ => Err(bad(
            text,
            "is not a number of CPUs (such as 1.5), a share such as `75%`, or `unlimited`",
        )),
    }
}

/// The per-sandbox limits of the machine's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSettings {
    /// Processes and threads together.
    pub processes: Amount,
    /// Memory (bytes or a share of the machine's).
    pub memory: Amount,
    /// Swap beyond the memory.
    pub swap: Amount,
    /// CPU time (thousandths of a CPU, or a share of all CPUs).
    pub cpus: Amount,
}

impl Default for LimitSettings {
    /// 2048 processes, half the machine's memory, no swap, three quarters of its CPUs.
    fn default() -> Self {
        Self {
            processes: Amount::Exactly(2048),
            memory: Amount::Percent(50),
            swap: Amount::Exactly(0),
            cpus: Amount::Percent(75),
        }
    }
}

/// The machine's totals the shares are taken of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MachineSize {
    pub memory_bytes: u64,
    pub cpus: u64,
}

impl MachineSize {
    /// This machine: `MemTotal` of `/proc/meminfo` and the CPUs this process may run on.
    pub fn this_machine() -> std::io::Result<Self> {
        let meminfo = std::fs::read_to_string("/proc/meminfo")?;
        let memory_kib = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "/proc/meminfo has no readable MemTotal line",
                )
            })?;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        Ok(Self {
            memory_bytes: memory_kib * 1024,
            cpus,
        })
    }
}

/// Concrete limits for one sandbox (`None`: not limited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub processes: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub swap_bytes: Option<u64>,
    pub cpu_millis: Option<u64>,
}

impl LimitSettings {
    /// The limits on a machine of `size`.
    pub fn resolve(&self, size: MachineSize) -> Limits {
        Limits {
            processes: self.processes.of(u64::MAX),
            memory_bytes: self.memory.of(size.memory_bytes),
            swap_bytes: self.swap.of(size.memory_bytes),
            cpu_millis: self.cpus.of(size.cpus * 1000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_cpus_and_counts_parse_or_say_what_is_wrong() {
        assert_eq!(parse_bytes("512MiB"), Ok(Amount::Exactly(512 << 20)));
        assert_eq!(parse_bytes("4G"), Ok(Amount::Exactly(4 << 30)));
        assert_eq!(parse_bytes("0"), Ok(Amount::Exactly(0)));
        assert_eq!(parse_bytes("50%"), Ok(Amount::Percent(50)));
        assert_eq!(parse_bytes("unlimited"), Ok(Amount::Unlimited));
        assert!(
            parse_bytes("4 parsecs")
                .unwrap_err()
                .to_string()
                .contains("unit")
        );
        assert!(
            parse_bytes("150%")
                .unwrap_err()
                .to_string()
                .contains("1% to 100%")
        );
        assert!(parse_bytes("99999999999T").is_err());
        assert_eq!(parse_cpus("1.5"), Ok(Amount::Exactly(1500)));
        assert_eq!(parse_cpus("75%"), Ok(Amount::Percent(75)));
        assert!(parse_cpus("0").is_err());
        assert!(
            parse_cpus("lots")
                .unwrap_err()
                .to_string()
                .contains("number of CPUs")
        );
        assert_eq!(parse_processes("2048"), Ok(Amount::Exactly(2048)));
        assert_eq!(parse_processes("unlimited"), Ok(Amount::Unlimited));
        assert!(parse_processes("3").is_err());
    }

    #[test]
    fn shares_resolve_against_the_machine() {
        let size = MachineSize {
            memory_bytes: 8 << 30,
            cpus: 2,
        };
        assert_eq!(
            LimitSettings::default().resolve(size),
            Limits {
                processes: Some(2048),
                memory_bytes: Some(4 << 30),
                swap_bytes: Some(0),
                cpu_millis: Some(1500),
            }
        );
        let none = LimitSettings {
            processes: Amount::Unlimited,
            memory: Amount::Unlimited,
            swap: Amount::Unlimited,
            cpus: Amount::Unlimited,
        };
        assert_eq!(
            none.resolve(size),
            Limits {
                processes: None,
                memory_bytes: None,
                swap_bytes: None,
                cpu_millis: None,
            }
        );
        assert_eq!(Amount::Percent(100).of(u64::MAX), Some(u64::MAX));
        assert!(MachineSize::this_machine().unwrap().memory_bytes > 0);
    }
}
