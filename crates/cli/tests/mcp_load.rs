//! `pi-retrospect mcp` under load: many calls in flight at once from one client are all
//! answered (the server runs a bounded number at a time and queues the rest in order).

mod common;

use std::path::{Path, PathBuf};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;

fn fixture(name: &str) -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::canonicalize(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

async fn connect(root: &Path) -> RunningService<RoleClient, ()> {
    let mut command = common::binary();
    command.arg("mcp").arg("--sessions-root").arg(root);
    let transport =
        TokioChildProcess::new(tokio::process::Command::from(command)).expect("spawn the server");
    ().serve(transport).await.expect("MCP handshake")
}

#[tokio::test(flavor = "current_thread")]
async fn three_hundred_calls_in_flight_are_all_answered() {
    let client = connect(&fixture("sessions")).await;
    let mut calls = tokio::task::JoinSet::new();
    for index in 0..300 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            let params = CallToolRequestParams::new("list_sessions".to_owned());
            (index, peer.call_tool(params).await)
        });
    }
    let results = calls.join_all().await;
    assert_eq!(results.len(), 300);
    for (index, result) in results {
        let result = result.unwrap_or_else(|error| panic!("call {index}: {error}"));
        assert_ne!(result.is_error, Some(true), "call {index}: {result:?}");
        assert!(result.structured_content.is_some(), "call {index}");
    }
    client.cancel().await.expect("close the connection");
}
