//! Any bytes on the MCP stdio transport, as lines: every line the server writes is JSON, the
//! server answers a ping sent after them (it is still serving), and it ends cleanly when the
//! peer closes the stream.
#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_runtime::Registry;
use tool_runtime::mcp::McpServer;

fuzz_target!(|bytes: &[u8]| {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    let registry =
        REGISTRY.get_or_init(|| Arc::new(tool_fuzz::builder().build().expect("a registry")));
    tool_fuzz::runtime().block_on(async {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let serving =
            tokio::spawn(McpServer::new(registry.clone()).serve_on(server_read, server_write));
        let (client_read, mut client_write) = tokio::io::split(client);
        let (probe_tx, probe_rx) = tokio::sync::oneshot::channel();
        // Everything the server writes is read as it comes, so that it never waits on us.
        let reading = tokio::spawn(async move {
            let mut lines = BufReader::new(client_read).lines();
            let mut probe_tx = Some(probe_tx);
            while let Ok(Some(line)) = lines.next_line().await {
                let value: serde_json::Value =
                    serde_json::from_str(&line).expect("every line the server writes is JSON");
                if value["id"] == "probe" && value.get("result").is_some() {
                    if let Some(tx) = probe_tx.take() {
                        let _ = tx.send(());
                    }
                }
            }
        });
        client_write.write_all(bytes).await.expect("write");
        client_write
            .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":\"probe\",\"method\":\"ping\"}\n")
            .await
            .expect("write");
        let answered = tokio::time::timeout(Duration::from_secs(5), probe_rx).await;
        client_write.shutdown().await.expect("shutdown");
        drop(client_write);
        let served = tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .expect("the server ends when its peer leaves")
            .expect("the server does not panic");
        reading.await.expect("the reader does not panic");
        assert!(
            matches!(answered, Ok(Ok(()))),
            "the ping went unanswered after {:?} (server: {served:?})",
            String::from_utf8_lossy(bytes)
        );
    });
});
