//! The SQLite store on its own: round trips, migrations, refusals.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use agent::{SessionRecord, SessionStore, StoreError};
use approvals::{ApprovalGrant, ApprovalScope, StandingApproval};
use model_client::Message;
use pretty_assertions::assert_eq;
use protocol::{ApprovalMode, NetworkProfileName, SessionSettings};
use session_store::{SCHEMA_VERSION, SqliteSessionStore};

fn record(id: &str) -> SessionRecord {
    SessionRecord {
        id: id.into(),
        settings: SessionSettings {
            folders: vec![],
            cwd: None,
            network_profile: NetworkProfileName::Standard,
            extra_hosts: vec!["pypi.org".into()],
            credentials: vec!["github".into()],
            model: Some("m".into()),
            approval_mode: ApprovalMode::AutoEdit,
        },
        messages: vec![Message::user_text("first line\nsecond")],
        session_approvals: vec![],
        last_seq: 3,
        created_ms: 10,
        updated_ms: 10,
    }
}

#[tokio::test]
async fn records_round_trip_and_messages_replace_from_an_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteSessionStore::open(&dir.path().join("nested/sessions.db")).unwrap();
    store.create(&record("a")).await.unwrap();
    let err = store.create(&record("a")).await.unwrap_err();
    assert_eq!(err, StoreError::AlreadyExists("a".into()));

    let loaded = store.load("a").await.unwrap().unwrap();
    assert_eq!(loaded.settings, record("a").settings);
    assert_eq!(loaded.messages, record("a").messages);

    let more = vec![Message::assistant_text("two"), Message::user_text("three")];
    store.save_messages("a", 1, &more, 9).await.unwrap();
    let replaced = vec![Message::user_text("three, edited")];
    store.save_messages("a", 2, &replaced, 11).await.unwrap();
    let loaded = store.load("a").await.unwrap().unwrap();
    assert_eq!(loaded.messages.len(), 3);
    assert_eq!(loaded.messages[2], replaced[0]);
    assert_eq!(loaded.last_seq, 11);

    let err = store.save_messages("a", 7, &more, 12).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err}");
    let err = store.save_messages("ghost", 0, &more, 1).await.unwrap_err();
    assert_eq!(err, StoreError::NotFound("ghost".into()));

    let list = store.list().await.unwrap();
    assert_eq!(list[0].title, "first line");
    assert_eq!(list[0].message_count, 3);
    assert!(store.load("missing").await.unwrap().is_none());
}

#[tokio::test]
async fn always_approvals_are_kept_once() {
    let store = SqliteSessionStore::open_in_memory().unwrap();
    let approval = StandingApproval::new(
        ApprovalScope::Always,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["cargo".into(), "test".into()],
        },
    );
    store.add_always_approval(&approval).await.unwrap();
    store.add_always_approval(&approval).await.unwrap();
    assert_eq!(
        store.always_approvals().await.unwrap(),
        vec![approval.clone()]
    );

    store.create(&record("s")).await.unwrap();
    let session = StandingApproval::new(
        ApprovalScope::Session,
        ApprovalGrant::ToolPath {
            tool: "write_file".into(),
            path: "/p/a".into(),
        },
    );
    store
        .save_session_approvals("s", std::slice::from_ref(&session))
        .await
        .unwrap();
    assert_eq!(
        store.load("s").await.unwrap().unwrap().session_approvals,
        vec![session]
    );
}

#[test]
fn a_database_from_a_newer_paddock_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    drop(SqliteSessionStore::open(&path).unwrap());
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(connection);
    let err = SqliteSessionStore::open(&path).unwrap_err();
    assert!(err.to_string().contains("newer"), "{err}");
}

#[tokio::test]
async fn reopening_keeps_data_and_does_not_rerun_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    SqliteSessionStore::open(&path)
        .unwrap()
        .create(&record("kept"))
        .await
        .unwrap();
    let store = SqliteSessionStore::open(&path).unwrap();
    assert!(store.load("kept").await.unwrap().is_some());
}
