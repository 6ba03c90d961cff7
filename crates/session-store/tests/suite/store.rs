//! The SQLite store on its own: round trips, migrations, refusals.

#![allow(clippy::unwrap_used, reason = "test code: a panic is a failed test")]

use agent::{SessionRecord, SessionStore, StoreError};
use approvals::{ApprovalGrant, ApprovalScope, StandingApproval};
use model_client::Message;
use pretty_assertions::assert_eq;
use protocol::{
    ApprovalMode, FolderAccess, FolderGrant, NetworkProfileName, ProviderKind, SessionSettings,
};
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
            secrets: vec!["GITHUB_TOKEN".into()],
            model: Some("m".into()),
            approval_mode: ApprovalMode::AutoEdit,
        },
        messages: vec![Message::user_text("first line\nsecond")],
        session_approvals: vec![],
        downloads: vec!["/p/tool".into()],
        written: vec!["/p/setup.sh".into()],
        provider: Some(ProviderKind::Local),
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

#[tokio::test]
async fn downloads_provider_and_folders_are_kept_and_listed() {
    let store = SqliteSessionStore::open_in_memory().unwrap();
    let mut first = record("d");
    first.settings.folders = vec![FolderGrant {
        path: "/home/alice/project".into(),
        access: FolderAccess::ReadWrite,
    }];
    store.create(&first).await.unwrap();
    store
        .add_downloads("d", &["/p/a.sh".into(), "/p/tool".into(), "/p/repo".into()])
        .await
        .unwrap();
    store
        .add_written("d", &["/p/build.sh".into(), "/p/setup.sh".into()])
        .await
        .unwrap();
    let loaded = store.load("d").await.unwrap().unwrap();
    assert_eq!(loaded.downloads, ["/p/tool", "/p/a.sh", "/p/repo"]);
    assert_eq!(loaded.written, ["/p/setup.sh", "/p/build.sh"]);
    assert_eq!(loaded.provider, Some(ProviderKind::Local));
    let err = store
        .add_downloads("ghost", &["/x".into()])
        .await
        .unwrap_err();
    assert_eq!(err, StoreError::NotFound("ghost".into()));

    store
        .save_provider("d", ProviderKind::Direct)
        .await
        .unwrap();
    let listed = store.list().await.unwrap();
    assert_eq!(listed[0].provider, Some(ProviderKind::Direct));
    assert_eq!(listed[0].folders, first.settings.folders);
}

#[tokio::test]
async fn always_approvals_are_removed_by_id() {
    let store = SqliteSessionStore::open_in_memory().unwrap();
    let keep = StandingApproval::new(
        ApprovalScope::Always,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["cargo".into(), "test".into()],
        },
    );
    let drop = StandingApproval::new(
        ApprovalScope::Always,
        ApprovalGrant::CommandPrefix {
            prefix: vec!["npm".into(), "test".into()],
        },
    );
    store.add_always_approval(&keep).await.unwrap();
    store.add_always_approval(&drop).await.unwrap();
    assert!(store.remove_always_approval(&drop.id).await.unwrap());
    assert!(!store.remove_always_approval(&drop.id).await.unwrap());
    assert_eq!(store.always_approvals().await.unwrap(), vec![keep]);
}

#[tokio::test]
async fn a_version_1_database_is_migrated_and_its_sessions_still_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sessions.db");
    // The schema as the first release wrote it, with one session in it.
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, settings TEXT NOT NULL,
                 last_seq INTEGER NOT NULL DEFAULT 0, created_ms INTEGER NOT NULL,
                 updated_ms INTEGER NOT NULL);
             CREATE TABLE messages (session_id TEXT NOT NULL REFERENCES sessions(id)
                 ON DELETE CASCADE, idx INTEGER NOT NULL, message TEXT NOT NULL,
                 PRIMARY KEY (session_id, idx));
             CREATE TABLE session_approvals (session_id TEXT NOT NULL REFERENCES sessions(id)
                 ON DELETE CASCADE, idx INTEGER NOT NULL, approval TEXT NOT NULL,
                 PRIMARY KEY (session_id, idx));
             CREATE TABLE always_approvals (id TEXT PRIMARY KEY, approval TEXT NOT NULL);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    connection
        .execute(
            "INSERT INTO sessions (id, settings, last_seq, created_ms, updated_ms)
             VALUES ('old', ?1, 5, 1, 2)",
            [serde_json::to_string(&record("old").settings).unwrap()],
        )
        .unwrap();
    drop(connection);

    let store = SqliteSessionStore::open(&path).unwrap();
    let loaded = store.load("old").await.unwrap().unwrap();
    assert_eq!(loaded.provider, None);
    assert!(loaded.downloads.is_empty() && loaded.written.is_empty());
    assert_eq!(loaded.last_seq, 5);
    store.add_downloads("old", &["/p/x".into()]).await.unwrap();
    store.add_written("old", &["/p/y".into()]).await.unwrap();
    let version: u32 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION, 3);
}
