use super::*;

struct Roots {
    _dir: tempfile::TempDir,
    config: PathBuf,
    system: PathBuf,
}

fn roots() -> Roots {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("xdg");
    let system = dir.path().join("etc-openshell");
    std::fs::create_dir_all(config.join("openshell")).unwrap();
    std::fs::create_dir_all(&system).unwrap();
    Roots {
        config,
        system,
        _dir: dir,
    }
}

fn env(roots: &Roots, extra: &[(&str, &str)]) -> HostEnvironment {
    let mut vars = vec![
        (
            "XDG_CONFIG_HOME".to_owned(),
            roots.config.display().to_string(),
        ),
        (
            "OPENSHELL_SYSTEM_GATEWAY_DIR".to_owned(),
            roots.system.display().to_string(),
        ),
    ];
    vars.extend(
        extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
    );
    HostEnvironment::from_vars(vars)
}

fn register(root: &Path, name: &str, metadata: &str, bundle: &[&str]) -> PathBuf {
    let dir = root.join("gateways").join(name);
    std::fs::create_dir_all(dir.join("mtls")).unwrap();
    std::fs::write(dir.join("metadata.json"), metadata).unwrap();
    for file in bundle {
        std::fs::write(dir.join("mtls").join(file), format!("PEM {file}")).unwrap();
    }
    dir
}

const ALL: &[&str] = &["ca.crt", "tls.crt", "tls.key"];

#[test]
fn the_endpoint_variable_wins_and_reads_no_metadata() {
    let roots = roots();
    let e = env(
        &roots,
        &[
            ("OPENSHELL_GATEWAY_ENDPOINT", "http://127.0.0.1:9/"),
            ("OPENSHELL_GATEWAY", "missing"),
        ],
    );
    let target = discover(&e).unwrap();
    assert_eq!(target.endpoint, "http://127.0.0.1:9");
    assert_eq!(target.tls, TlsMode::Plaintext);
    assert_eq!(target.name, None);
    assert_eq!(target.found_by, "OPENSHELL_GATEWAY_ENDPOINT");
}

#[test]
fn the_name_comes_from_the_variable_then_user_then_system_active_gateway() {
    let roots = roots();
    let user = roots.config.join("openshell");
    register(
        &user,
        "one",
        r#"{"gateway_endpoint":"https://127.0.0.1:1"}"#,
        ALL,
    );
    register(
        &roots.system,
        "two",
        r#"{"gateway_endpoint":"https://127.0.0.1:2"}"#,
        ALL,
    );
    register(
        &user,
        "three",
        r#"{"gateway_endpoint":"https://localhost:3"}"#,
        ALL,
    );
    std::fs::write(roots.system.join("active_gateway"), "two\n").unwrap();
    assert_eq!(
        discover(&env(&roots, &[])).unwrap().name.as_deref(),
        Some("two")
    );

    std::fs::write(user.join("active_gateway"), "one").unwrap();
    let target = discover(&env(&roots, &[])).unwrap();
    assert_eq!(target.name.as_deref(), Some("one"));
    assert_eq!(target.host, "127.0.0.1");
    assert!(matches!(target.tls, TlsMode::Mtls { .. }));
    assert!(
        target.found_by.contains("active_gateway"),
        "{}",
        target.found_by
    );

    let target = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "three")])).unwrap();
    assert_eq!(target.name.as_deref(), Some("three"));
    assert_eq!(target.host, "localhost");
}

#[test]
fn metadata_falls_back_to_the_system_root_and_names_are_sanitised() {
    let roots = roots();
    register(
        &roots.system,
        "my_gw",
        r#"{"gateway_endpoint":"http://10.0.0.1:80"}"#,
        &[],
    );
    let target = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "my/gw")])).unwrap();
    assert_eq!(target.name.as_deref(), Some("my_gw"));
    assert_eq!(target.tls, TlsMode::Plaintext);
    assert_eq!(sanitize_name("a b/../c"), "a_b_.._c");
}

#[test]
fn missing_pieces_are_errors_that_say_what_fixes_them() {
    let roots = roots();
    let err = discover(&env(&roots, &[])).unwrap_err();
    assert!(err.to_string().contains("openshell gateway add"), "{err}");

    let err = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "ghost")])).unwrap_err();
    assert!(matches!(err, DiscoveryError::NotRegistered { .. }), "{err}");

    let user = roots.config.join("openshell");
    register(
        &user,
        "half",
        r#"{"gateway_endpoint":"https://127.0.0.1:1"}"#,
        &["ca.crt"],
    );
    let err = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "half")])).unwrap_err();
    assert!(
        err.to_string().contains("tls.crt, tls.key missing"),
        "{err}"
    );

    register(&user, "bad", "{not json", &[]);
    let err = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "bad")])).unwrap_err();
    assert!(err.to_string().contains("metadata.json"), "{err}");

    register(&user, "ftp", r#"{"gateway_endpoint":"ftp://x"}"#, &[]);
    let err = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "ftp")])).unwrap_err();
    assert!(err.to_string().contains("https:// or http://"), "{err}");

    register(
        &user,
        "edge",
        r#"{"gateway_endpoint":"https://gw.example.com","auth_mode":"cloudflare_jwt"}"#,
        &[],
    );
    let err = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "edge")])).unwrap_err();
    assert!(err.to_string().contains("cloudflare_jwt"), "{err}");
}

#[test]
fn oidc_reads_the_access_token_and_never_prints_it() {
    let roots = roots();
    let user = roots.config.join("openshell");
    let dir = register(
        &user,
        "corp",
        r#"{"gateway_endpoint":"https://gw.example.com:443","auth_mode":"oidc"}"#,
        &[],
    );
    let err = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "corp")])).unwrap_err();
    assert!(
        err.to_string().contains("openshell gateway login corp"),
        "{err}"
    );

    std::fs::write(
        dir.join("oidc_token.json"),
        r#"{"access_token":"tok-PLANTED-123"}"#,
    )
    .unwrap();
    let target = discover(&env(&roots, &[("OPENSHELL_GATEWAY", "corp")])).unwrap();
    assert_eq!(target.bearer.as_ref().unwrap().expose(), "tok-PLANTED-123");
    assert_eq!(target.tls, TlsMode::SystemRoots);
    assert!(!format!("{target:?}").contains("PLANTED"));
    assert!(target.auth_description().contains("OIDC bearer"));
}

#[test]
fn endpoints_split_into_scheme_and_tls_server_name() {
    assert_eq!(
        split_endpoint("https://127.0.0.1:17670").unwrap(),
        ("https".into(), "127.0.0.1".into())
    );
    assert_eq!(
        split_endpoint("https://[::1]:17670/").unwrap(),
        ("https".into(), "::1".into())
    );
    assert_eq!(
        split_endpoint("HTTP://gw.local").unwrap(),
        ("http".into(), "gw.local".into())
    );
    assert!(split_endpoint("https://user:pw@gw").is_err());
    assert!(split_endpoint("https://:1").is_err());
    assert!(split_endpoint("127.0.0.1:1").is_err());
}

#[test]
fn the_environment_debug_shows_names_not_values() {
    let e = HostEnvironment::from_vars([("GITHUB_TOKEN", "ghp_PLANTED")]);
    assert!(!format!("{e:?}").contains("PLANTED"));
    assert_eq!(e.var("GITHUB_TOKEN"), Some("ghp_PLANTED"));
    assert_eq!(HostEnvironment::from_vars([("A", "")]).var("A"), None);
}
