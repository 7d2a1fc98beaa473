use super::*;

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::create_dir_all(dir.path().join("graders/store")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join("graders/router")).expect("mkdir");
    std::fs::write(dir.path().join("graders/store/a.json"), "{}").expect("write");
    std::fs::write(dir.path().join("graders/store/b.json"), "[]").expect("write");
    std::fs::write(dir.path().join("graders/router/labels.json"), "[]").expect("write");
    dir
}

fn mismatch(r: Result<Lock, FreezeError>) -> Vec<SuiteChange> {
    match r {
        Err(FreezeError::Mismatch { changes }) => changes,
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

fn change(suite: &str, change: Change) -> SuiteChange {
    SuiteChange {
        suite: suite.into(),
        change,
    }
}

#[test]
fn freeze_then_verify_then_detect_each_kind_of_change_by_suite() {
    let dir = tree();
    let root = dir.path();
    assert!(matches!(verify(root), Err(FreezeError::Missing { .. })));
    let lock = write_lock(root).expect("freeze");
    assert_eq!(verify(root).expect("verify"), lock);
    assert!(lock.frozen_by.starts_with("passk "), "{}", lock.frozen_by);

    std::fs::write(root.join("graders/store/a.json"), "{ }").expect("edit");
    std::fs::write(root.join("graders/store/c.json"), "1").expect("add");
    std::fs::remove_file(root.join("graders/store/b.json")).expect("rm");
    let changes = mismatch(verify(root));
    assert_eq!(
        changes,
        vec![
            change("store", Change::Modified("graders/store/a.json".into())),
            change("store", Change::Added("graders/store/c.json".into())),
            change("store", Change::Removed("graders/store/b.json".into())),
        ]
    );
    let msg = FreezeError::Mismatch { changes }.to_string();
    assert!(
        msg.contains("suite store: graders/store/a.json changed"),
        "{msg}"
    );
    // The router did not move: a run of it alone goes on.
    let parts = verify_suites(root, &["router"]).expect("router unchanged");
    assert_eq!(parts["router"], lock.suites["router"]);
}

#[test]
fn adding_or_changing_one_suite_never_moves_another_suites_digest() {
    let dir = tree();
    let root = dir.path();
    let before = write_lock(root).expect("freeze");
    std::fs::create_dir_all(root.join("graders/garden")).expect("mkdir");
    std::fs::write(root.join("graders/garden/expectations.json"), "{}").expect("write");
    let changes = mismatch(verify(root));
    assert_eq!(changes, vec![change("garden", Change::NotFrozen)]);
    let after = write_lock(root).expect("freeze");
    assert_eq!(after.suites["store"].digest, before.suites["store"].digest);
    std::fs::write(root.join("graders/garden/expectations.json"), "[]").expect("edit");
    let again = current(root).expect("current");
    assert_ne!(again.suites["garden"].digest, after.suites["garden"].digest);
    assert_eq!(again.suites["store"].digest, before.suites["store"].digest);
    std::fs::remove_dir_all(root.join("graders/garden")).expect("rm");
    assert_eq!(mismatch(verify(root)), vec![change("garden", Change::Gone)]);
}

#[test]
fn the_files_an_mcp_server_runs_from_are_frozen_with_its_suite() {
    let dir = tree();
    let root = dir.path();
    let suite = root.join("tasks/desk");
    std::fs::create_dir_all(&suite).expect("mkdir");
    std::fs::write(suite.join("server.py"), "print()").expect("write");
    std::fs::write(
        suite.join("mcp.json"),
        r#"{"command": "python3", "args": ["server.py"], "files": ["server.py"], "end_state": "desk://state"}"#,
    )
    .expect("write");
    let lock = write_lock(root).expect("freeze");
    let frozen: Vec<&str> = lock.suites["desk"]
        .files
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(frozen, ["tasks/desk/mcp.json", "tasks/desk/server.py"]);
    assert_eq!(lock.suites["desk"].source, source_digest("mcp"));
    verify(root).expect("verify");
    std::fs::write(suite.join("server.py"), "print(1)").expect("edit");
    assert_eq!(
        mismatch(verify(root)),
        vec![change(
            "desk",
            Change::Modified("tasks/desk/server.py".into())
        )]
    );
    std::fs::remove_file(suite.join("server.py")).expect("rm");
    assert!(matches!(verify(root), Err(FreezeError::Declaration(_))));
    verify_suites(root, &["store"]).expect("a broken MCP suite does not stop the store");
}

#[test]
fn a_different_source_digest_is_reported() {
    let dir = tree();
    let mut lock = write_lock(dir.path()).expect("freeze");
    let store = lock.suites["store"].clone();
    lock.suites
        .insert("store".into(), SuiteLock::new("0".repeat(64), store.files));
    std::fs::write(lock_path(dir.path()), lock.render()).expect("write");
    assert_eq!(
        mismatch(verify(dir.path())),
        vec![change("store", Change::GradingSource)]
    );
}

#[test]
fn each_compiled_in_suite_has_its_own_grading_source() {
    assert_eq!(source_digest("store").len(), 64);
    assert_ne!(source_digest("store"), source_digest("triage"));
    assert_ne!(source_digest("store"), source_digest("mcp"));
    assert_eq!(source_digest("garden"), source_digest("mcp"));
}

#[test]
fn a_hand_edited_lock_is_malformed_naming_the_suite_line() {
    let dir = tree();
    let lock = write_lock(dir.path()).expect("freeze");
    let text = lock.render().replace("file store ", "file store 00");
    std::fs::write(lock_path(dir.path()), &text).expect("write");
    let line = 1 + text
        .lines()
        .position(|l| l.starts_with("suite store"))
        .expect("line");
    match verify(dir.path()) {
        Err(FreezeError::Malformed { line: l, .. }) => assert_eq!(l, line),
        other => panic!("expected a malformed lock, got {other:?}"),
    }
}

#[test]
fn an_older_lock_says_what_to_do() {
    let dir = tree();
    std::fs::write(
        lock_path(dir.path()),
        "# old\ndigest 00\nsource 11\nfile 22 store/a.json\n",
    )
    .expect("write");
    let err = verify(dir.path()).expect_err("old");
    assert!(matches!(err, FreezeError::OldFormat { .. }), "{err}");
    assert!(err.to_string().contains("run `passk freeze`"), "{err}");
}

#[test]
fn malformed_locks_name_a_real_line() {
    let dir = tree();
    write_lock(dir.path()).expect("freeze");
    let path = lock_path(dir.path());
    let text = std::fs::read_to_string(&path).expect("read");
    let no_source: String = text
        .lines()
        .filter(|l| !l.starts_with("source store"))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, &no_source).expect("write");
    let err = read_lock(dir.path()).expect_err("no source");
    assert!(err.to_string().contains("no `source` line"), "{err}");
    assert!(!err.to_string().contains(":0:"), "{err}");
    std::fs::write(&path, b"# lock\n\xff\xfe\n").expect("write");
    match read_lock(dir.path()) {
        Err(FreezeError::Malformed { line, .. }) => assert_eq!(line, 2),
        other => panic!("expected a malformed lock, got {other:?}"),
    }
}
