//! The workers one process hosts, for a runtime whose blocks also travel between processes.
//!
//! The first local worker runs on the calling thread; the others each on a thread of their own,
//! fed through a channel in the order commands were issued. When a plan rotates, every local
//! worker hands its block back to the calling thread, which passes blocks one place to the left:
//! between local workers directly, and across the process boundary through `exchange` (send the
//! first local worker's block to the left process, receive the block for the last local worker
//! from the right one). With one process, `exchange` returns its argument and the ring closes here.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::channel;
use std::thread::{self, Scope};

use strads_core::{Assignment, BoxError, EngineError, Plan, Program, Round, Worker, WorkerId};

use crate::worker_loop::{
    Command, Held, Remote, Reply, ThroughCaller, checkpoint_failed, push_and_pass, serve, stopped,
};

/// The workers `first..first + count` of a run, hosted by this process. The MPI runtime's; it is
/// compiled and tested in the default build too (with one process, the ring closes here).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) struct Pool<P: Program, W> {
    first: WorkerId,
    worker: W,
    remotes: Vec<Remote<P>>,
    pending: VecDeque<Vec<P::Partial>>,
    /// Commits not yet sent to the threads (after rounds for the leader's first worker alone).
    held: Held<P>,
}

#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
impl<P: Program, W: Worker<P>> Pool<P, W> {
    /// Builds workers `first..first + count` (the first here, the others on threads of `scope`).
    pub(crate) fn start<'scope, 'env, F>(
        scope: &'scope Scope<'scope, 'env>,
        first: WorkerId,
        count: usize,
        make_worker: &'env F,
    ) -> Result<Self, EngineError>
    where
        F: Fn(WorkerId) -> Result<W, BoxError> + Sync,
    {
        let mut remotes = Vec::with_capacity(count.saturating_sub(1));
        for id in first + 1..first + count {
            let (commands, inbox) = channel();
            let (outbox, replies) = channel();
            thread::Builder::new()
                .name(format!("strads-worker-{id}"))
                .spawn_scoped(scope, move || serve(id, id - first, make_worker, inbox, outbox, ThroughCaller, 0))
                .map_err(|e| EngineError::Transport(format!("could not start worker thread {id}: {e}")))?;
            remotes.push(Remote { commands, replies });
        }
        let worker = make_worker(first).map_err(|source| EngineError::Setup { worker: first, source })?;
        for (offset, remote) in remotes.iter().enumerate() {
            let id = first + offset + 1;
            match remote.replies.recv() {
                Ok(Reply::Ready) => {}
                Ok(Reply::SetupFailed(source)) => return Err(EngineError::Setup { worker: id, source }),
                Ok(Reply::Failed(error)) => return Err(error),
                Ok(_) | Err(_) => return Err(stopped(id)),
            }
        }
        Ok(Pool { first, worker, remotes, pending: VecDeque::new(), held: Held::new() })
    }

    /// Number of workers in this pool.
    pub(crate) fn len(&self) -> usize {
        self.remotes.len() + 1
    }

    /// Pushes a plan addressed to this pool's workers (an `Each` has one task per local worker) and
    /// keeps the partials for [`Pool::collect`]. A rotating plan passes blocks as the module says.
    pub(crate) fn push(
        &mut self,
        round: Round,
        plan: Arc<Plan<P::Task>>,
        exchange: &mut dyn FnMut(P::Block) -> Result<P::Block, EngineError>,
    ) -> Result<(), EngineError> {
        // A round for worker 0 alone reaches only the leader's pool, whose first worker it is.
        self.held.before_push(&plan, &self.remotes, self.first)?;
        let remotes = if plan.leader_only { &self.remotes[..0] } else { &self.remotes[..] };
        for (offset, remote) in remotes.iter().enumerate() {
            remote
                .commands
                .send(Command::Push(round, Arc::clone(&plan)))
                .map_err(|_| stopped(self.first + offset + 1))?;
        }
        let (partial, block) = push_and_pass(&mut self.worker, self.first, 0, round, &plan, &ThroughCaller)?;
        let mut partials = Vec::with_capacity(self.len());
        let mut blocks = Vec::with_capacity(self.len());
        partials.push(partial);
        blocks.extend(block);
        for (offset, remote) in remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::Pushed(partial, block)) => {
                    partials.push(partial);
                    blocks.extend(block);
                }
                Ok(Reply::Failed(error)) => return Err(error),
                Ok(_) | Err(_) => return Err(stopped(self.first + offset + 1)),
            }
        }
        if plan.rotate {
            // Worker i takes the block of worker i + 1; the last takes the one from the right.
            let mut blocks = blocks.into_iter();
            let own = blocks.next().ok_or(EngineError::NoBlock { round: round.index, worker: self.first })?;
            let mut incoming: Vec<P::Block> = blocks.collect();
            incoming.push(exchange(own)?);
            let mut incoming = incoming.into_iter();
            if let Some(block) = incoming.next() {
                self.worker.receive_block(block);
            }
            for (offset, (remote, block)) in self.remotes.iter().zip(incoming).enumerate() {
                remote.commands.send(Command::Block(block)).map_err(|_| stopped(self.first + offset + 1))?;
            }
        }
        self.pending.push_back(partials);
        Ok(())
    }

    /// The local partials of the oldest round pushed and not yet collected.
    pub(crate) fn collect(&mut self) -> Result<Vec<P::Partial>, EngineError> {
        self.pending.pop_front().ok_or_else(|| EngineError::Transport("collect without push".into()))
    }

    /// Delivers a commit addressed to this pool's workers (an `Each` has one value per local worker).
    pub(crate) fn sync(&mut self, round: Round, commit: Arc<Assignment<P::Commit>>) -> Result<(), EngineError> {
        self.held.sync(round, Arc::clone(&commit), &self.remotes, self.first)?;
        if let Some(value) = commit.for_worker(0) {
            self.worker.sync(round, value);
        }
        Ok(())
    }

    /// Every local worker's saved state, in worker order.
    pub(crate) fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError> {
        self.held.release(&self.remotes, self.first)?;
        for (offset, remote) in self.remotes.iter().enumerate() {
            remote.commands.send(Command::Save).map_err(|_| stopped(self.first + offset + 1))?;
        }
        let mut states = Vec::with_capacity(self.len());
        states.push(self.worker.save().map_err(|e| checkpoint_failed(self.first, "saving", e))?);
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::State(state)) => states.push(state),
                Ok(Reply::Failed(error)) => return Err(error),
                _ => return Err(stopped(self.first + offset + 1)),
            }
        }
        Ok(states)
    }

    /// Restores every local worker from its state, in worker order.
    pub(crate) fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError> {
        if states.len() != self.len() {
            return Err(EngineError::Checkpoint(format!(
                "{} saved states for the {} workers of this process",
                states.len(),
                self.len()
            )));
        }
        let mut states = states.into_iter();
        let first = states.next().ok_or_else(|| EngineError::Checkpoint("no saved worker states".into()))?;
        self.held.release(&self.remotes, self.first)?;
        for (offset, (remote, state)) in self.remotes.iter().zip(states).enumerate() {
            remote.commands.send(Command::Restore(state)).map_err(|_| stopped(self.first + offset + 1))?;
        }
        self.worker.restore(&first).map_err(|e| checkpoint_failed(self.first, "restoring", e))?;
        for (offset, remote) in self.remotes.iter().enumerate() {
            match remote.replies.recv() {
                Ok(Reply::Ready) => {}
                Ok(Reply::Failed(error)) => return Err(error),
                _ => return Err(stopped(self.first + offset + 1)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each worker holds one block (a number) and reports it, plus the commits it synced.
    struct Toy;
    impl Program for Toy {
        type Task = ();
        type Partial = (WorkerId, u64);
        type Commit = u64;
        type Feedback = ();
        type Block = u64;
    }
    struct Holder {
        id: WorkerId,
        block: Option<u64>,
        synced: u64,
    }
    impl Worker<Toy> for Holder {
        fn push(&mut self, _round: Round, _task: &()) -> (WorkerId, u64) {
            (self.id, self.block.unwrap_or(0) + self.synced)
        }
        fn sync(&mut self, _round: Round, commit: &u64) {
            self.synced += commit;
        }
        fn pass_block(&mut self) -> Option<u64> {
            self.block.take()
        }
        fn receive_block(&mut self, block: u64) {
            self.block = Some(block);
        }
        fn save(&self) -> Result<Vec<u8>, BoxError> {
            Ok(self.synced.to_le_bytes().to_vec())
        }
        fn restore(&mut self, state: &[u8]) -> Result<(), BoxError> {
            self.synced = u64::from_le_bytes(state.try_into()?);
            Ok(())
        }
    }

    #[test]
    fn a_pool_on_one_process_pushes_rotates_syncs_and_saves_in_worker_order() {
        let round = |index| Round { index, synced: index };
        let make = |id: WorkerId| Ok(Holder { id, block: Some(100 * (id as u64 + 1)), synced: 0 });
        thread::scope(|scope| {
            let mut pool = Pool::<Toy, Holder>::start(scope, 0, 3, &make).unwrap();
            let mut ring = |own: u64| Ok(own); // one process: the block of the first goes to the last
            pool.push(round(0), Arc::new(Plan::all(()).rotating()), &mut ring).unwrap();
            assert_eq!(pool.collect().unwrap(), vec![(0, 100), (1, 200), (2, 300)]);
            pool.sync(round(0), Arc::new(Assignment::All(5))).unwrap();
            pool.push(round(1), Arc::new(Plan::all(())), &mut ring).unwrap();
            // Worker p took worker p + 1's block, the last the first's.
            assert_eq!(pool.collect().unwrap(), vec![(0, 205), (1, 305), (2, 105)]);
            let states = pool.save().unwrap();
            pool.sync(round(1), Arc::new(Assignment::Each(vec![1, 2, 3]))).unwrap();
            pool.restore(states).unwrap();
            pool.push(round(2), Arc::new(Plan::all(())), &mut ring).unwrap();
            assert_eq!(pool.collect().unwrap(), vec![(0, 205), (1, 305), (2, 105)]);
            // A round for worker 0 alone: only the first answers; a commit still reaches all.
            pool.push(round(3), Arc::new(Plan::leader(())), &mut ring).unwrap();
            assert_eq!(pool.collect().unwrap(), vec![(0, 205)]);
            pool.sync(round(3), Arc::new(Assignment::Each(vec![1, 2, 3]))).unwrap();
            pool.push(round(4), Arc::new(Plan::all(())), &mut ring).unwrap();
            assert_eq!(pool.collect().unwrap(), vec![(0, 206), (1, 307), (2, 108)]);
            let short = Arc::new(Plan::each(vec![(), ()]));
            assert!(matches!(pool.push(round(5), short, &mut ring), Err(EngineError::PlanShape { workers: 3, .. })));
        });
    }
}
