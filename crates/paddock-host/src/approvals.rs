//! Standing approvals: the machine's `always` ones, and a session's `session` ones. A session
//! this process runs is told through its `revoke_approval` op (it answers with
//! `approval_revoked`); a stored one is edited in the store. A session running in another
//! process re-reads the machine's `always` approvals at its next turn.

use agent::{SessionStore, listed_approval};
use protocol::{Op, StandingApproval};

use crate::error::HostError;
use crate::host::Host;

impl Host {
    /// The machine's `always` approvals, or one session's `session` approvals.
    pub async fn standing_approvals(
        &self,
        session_id: Option<&str>,
    ) -> Result<Vec<StandingApproval>, HostError> {
        let store = &self.inner.store;
        let approvals = match session_id {
            None => store.always_approvals().await?,
            Some(id) => {
                store
                    .load(id)
                    .await?
                    .ok_or_else(|| HostError::SessionNotFound { id: id.to_owned() })?
                    .session_approvals
            }
        };
        Ok(approvals.iter().map(listed_approval).collect())
    }

    /// Withdraws a standing approval by the id the listing shows; calls it covered ask again.
    /// Returns what it had let through.
    pub async fn revoke_standing_approval(
        &self,
        approval_id: &str,
        session_id: Option<&str>,
    ) -> Result<StandingApproval, HostError> {
        let store = &self.inner.store;
        let not_found = |scope: &str| {
            HostError::invalid(
                "approval_id",
                format!("no {scope} approval has the id `{approval_id}`"),
            )
        };
        match session_id {
            None => {
                let known = store
                    .always_approvals()
                    .await?
                    .into_iter()
                    .find(|a| a.id == approval_id)
                    .ok_or_else(|| not_found("`always`"))?;
                store.remove_always_approval(approval_id).await?;
                Ok(listed_approval(&known))
            }
            Some(id) => {
                let record = store
                    .load(id)
                    .await?
                    .ok_or_else(|| HostError::SessionNotFound { id: id.to_owned() })?;
                let known = record
                    .session_approvals
                    .iter()
                    .find(|a| a.id == approval_id)
                    .cloned()
                    .ok_or_else(|| not_found("session"))?;
                if let Ok(running) = self.live_session(id).await {
                    running.session.submit(Op::RevokeApproval {
                        approval_id: approval_id.to_owned(),
                    })?;
                } else {
                    let kept: Vec<_> = record
                        .session_approvals
                        .into_iter()
                        .filter(|a| a.id != approval_id)
                        .collect();
                    store.save_session_approvals(id, &kept).await?;
                }
                Ok(listed_approval(&known))
            }
        }
    }
}
