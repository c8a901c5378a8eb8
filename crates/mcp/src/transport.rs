//! The stdio transport with back-pressure: a wrapper around rmcp's transport that counts the
//! answers handed to it and not yet written, and stops reading requests while too many are
//! waiting for the client to read them. It also keeps the requests read and not yet answered,
//! so that every one is answered: a request reusing the id of one still open runs under an id
//! of its own and is answered under the client's (rmcp would drop the first), and when the
//! client closes its end the transport reports the end only once the open requests are
//! answered (rmcp would drop the calls still waiting for their turn).
//!
//! rmcp reads the next message as soon as it has dispatched the last one and spawns one task
//! per answer to write it, so a client that keeps writing and stops reading would make the
//! server hold every unread answer. Pausing `receive` here leaves the unread requests in the
//! pipe, where the kernel bounds them, and the client's writes block instead.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcMessage, NumberOrString, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Notify;

use crate::load::Load;

/// A transport that pauses reading while [`Load`] says too many answers are unwritten, and
/// answers every request it read.
pub(crate) struct BoundedTransport<T> {
    inner: T,
    load: Arc<Load>,
    open: Arc<OpenRequests>,
}

impl<T> BoundedTransport<T> {
    /// Returns `inner` with reading paused while `load` has too many unwritten answers.
    pub(crate) fn new(inner: T, load: Arc<Load>) -> BoundedTransport<T> {
        BoundedTransport {
            inner,
            load,
            open: Arc::new(OpenRequests::default()),
        }
    }
}

/// The requests read and not yet answered (or cancelled), by the id rmcp sees.
#[derive(Debug, Default)]
struct OpenRequests {
    state: Mutex<OpenState>,
    /// Woken whenever a request is answered or cancelled.
    answered: Notify,
}

#[derive(Debug, Default)]
struct OpenState {
    ids: HashSet<RequestId>,
    /// The client's id of each request that reused an open one, by the id it runs under.
    renamed: HashMap<RequestId, RequestId>,
    n_renamed: u64,
}

impl OpenRequests {
    /// Records a request read; one whose id is open already gets an id of its own.
    fn open(&self, id: &mut RequestId) {
        let mut state = self.lock();
        if state.ids.contains(id) {
            let own = loop {
                state.n_renamed += 1;
                let own = NumberOrString::String(
                    format!("pi-retrospect:reused-id:{}", state.n_renamed).into(),
                );
                if !state.ids.contains(&own) {
                    break own;
                }
            };
            state.renamed.insert(own.clone(), id.clone());
            *id = own;
        }
        state.ids.insert(id.clone());
    }

    /// Records that the request `id` was answered, and gives the answer the client's id.
    fn answered(&self, id: &mut RequestId) {
        let mut state = self.lock();
        state.ids.remove(id);
        if let Some(client_id) = state.renamed.remove(id) {
            *id = client_id;
        }
        self.answered.notify_waiters();
    }

    /// Records that the client cancelled the request `id`: it gets no answer.
    fn cancelled(&self, id: &RequestId) {
        self.lock().ids.remove(id);
        self.answered.notify_waiters();
    }

    /// Waits until no request is open, or until none has been answered for `patience` (a
    /// request that would never be answered does not keep the server alive).
    async fn wait_all_answered(&self, patience: Duration) {
        loop {
            let notified = self.answered.notified();
            if self.lock().ids.is_empty() {
                return;
            }
            if tokio::time::timeout(patience, notified).await.is_err() {
                return;
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, OpenState> {
        // The state is a set and a map changed in single steps; one left by a panicking
        // holder is still whole.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for BoundedTransport<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &mut item {
            JsonRpcMessage::Response(response) => self.open.answered(&mut response.id),
            JsonRpcMessage::Error(error) => {
                if let Some(id) = &mut error.id {
                    self.open.answered(id);
                }
            }
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => {}
        }
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
        // inner read, which keeps a partial line on the transport itself; nothing is recorded
        // before a message has been read whole.
        self.load.wait_for_writer().await;
        match self.inner.receive().await {
            Some(JsonRpcMessage::Request(mut request)) => {
                self.open.open(&mut request.id);
                Some(JsonRpcMessage::Request(request))
            }
            Some(JsonRpcMessage::Notification(notification)) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.open.cancelled(id);
                }
                Some(JsonRpcMessage::Notification(notification))
            }
            Some(other) => Some(other),
            None => {
                // The client closed its end: the calls read are still answered (a client
                // that writes its requests and then closes reads them all). Every call ends
                // within its time budget, so while calls remain one is answered at least
                // that often.
                let patience = self.load.limits().call_timeout + Duration::from_secs(5);
                self.open.wait_all_answered(patience).await;
                None
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}
