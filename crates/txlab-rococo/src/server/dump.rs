//! The end of a multi-process run (`remote`): the client process asks each server for the rows
//! it reports in a merged snapshot (`Routing::reports`), chunk by chunk so that no message
//! nears the frame limit, and then releases it; a released server's process may exit.
//!
//! The chunks are cut once, at the first request, and kept: a retransmitted request gets the
//! same chunk again.

use super::{Program, Server};
use crate::client::Rows;
use crate::config::Recording;
use crate::msg::Msg;
use crate::workload::PiecedWorkload;
use txlab_core::TableId;
use txlab_net::{Ctx, NodeId};

/// Row bytes per `Rows` message (far below the transport's 16 MiB frame limit).
const CHUNK_BYTES: usize = 1 << 20;

/// What the server keeps of the end of a run.
#[derive(Debug, Default)]
pub(super) struct Dump {
    chunks: Option<Vec<Rows>>,
    released: bool,
}

impl<W: PiecedWorkload, R: Recording> Server<W, R> {
    /// Whether the client process released this server (its process may exit).
    pub fn released(&self) -> bool {
        self.dump.released
    }

    pub(super) fn dump_chunk(
        &mut self,
        from: NodeId,
        chunk: u32,
        ctx: &mut Ctx<'_, Msg<Program<W>>>,
    ) {
        if self.dump.chunks.is_none() {
            match self.cut_chunks() {
                Ok(c) => self.dump.chunks = Some(c),
                Err(e) => {
                    self.fail(format!("dump the shard: {e}"));
                    return;
                }
            }
        }
        let chunks = self.dump.chunks.as_ref().expect("cut above");
        let rows = chunks.get(chunk as usize).cloned().unwrap_or_default();
        let msg = Msg::Rows {
            chunk,
            chunks: chunks.len() as u32,
            rows,
        };
        self.send(ctx, from, msg);
    }

    pub(super) fn release(&mut self, from: NodeId, ctx: &mut Ctx<'_, Msg<Program<W>>>) {
        self.dump.released = true;
        self.send(ctx, from, Msg::Released);
    }

    /// The rows this server reports, in chunks of about [`CHUNK_BYTES`] (at least one chunk).
    fn cut_chunks(&self) -> Result<Vec<Rows>, txlab_core::Error> {
        let mut chunks = vec![Vec::new()];
        let mut bytes = 0;
        for t in 0..self.shard.schema().len() {
            let table = TableId(t as u16);
            for (key, value) in self.shard.rows(table)? {
                if !self.shared.routing.reports(self.me, table, key) {
                    continue;
                }
                if bytes + value.len() > CHUNK_BYTES && bytes > 0 {
                    chunks.push(Vec::new());
                    bytes = 0;
                }
                bytes += value.len() + 16;
                chunks
                    .last_mut()
                    .expect("never empty")
                    .push((table, key, value));
            }
        }
        Ok(chunks)
    }
}
