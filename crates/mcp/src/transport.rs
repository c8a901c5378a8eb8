//! The stdio transport with back-pressure: a wrapper around rmcp's transport that counts the
//! answers handed to it and not yet written, and stops reading requests while too many are
//! waiting for the client to read them.
//!
//! rmcp reads the next message as soon as it has dispatched the last one and spawns one task
//! per answer to write it, so a client that keeps writing and stops reading would make the
//! server hold every unread answer. Pausing `receive` here leaves the unread requests in the
//! pipe, where the kernel bounds them, and the client's writes block instead.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::load::Load;

/// A transport that pauses reading while [`Load`] says too many answers are unwritten.
pub(crate) struct BoundedTransport<T> {
    inner: T,
    load: Arc<Load>,
}

impl<T> BoundedTransport<T> {
    /// Returns `inner` with reading paused while `load` has too many unwritten answers.
    pub(crate) fn new(inner: T, load: Arc<Load>) -> BoundedTransport<T> {
        BoundedTransport { inner, load }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for BoundedTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Counted from the moment rmcp hands the answer over until its bytes are written (or
        // the write failed), which is exactly while the server holds it for the client.
        let is_answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let unwritten = is_answer.then(|| self.load.unwritten_answer());
        let send = self.inner.send(item);
        async move {
            let result = send.await;
            drop(unwritten);
            result
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        // Waiting is cancel-safe (rmcp polls `receive` inside a `select!`), and so is the
        // inner read, which keeps a partial line on the transport itself.
        self.load.wait_for_writer().await;
        self.inner.receive().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
