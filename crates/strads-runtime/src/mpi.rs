//! The MPI runtime: every rank of an MPI job hosts `threads` workers; rank 0 also leads.
//!
//! Worker `w` lives on rank `w / threads`, so the workers of a job are numbered as the embedded
//! runtime numbers its threads, and the same program with the same total number of workers
//! computes the same thing on either. Rank 0 runs the driver (scheduler and aggregator) on its
//! main thread next to its own first worker, so no process only schedules. The leader broadcasts
//! every command (`MPI_Bcast`, a tree rather than one send per rank) except an `Each` assignment,
//! which goes to each rank sliced to its own workers, and each rank answers with its workers'
//! partials. Blocks of a rotating plan pass one worker to the
//! left; across a rank boundary they go straight from rank to rank, never through the leader.
//!
//! Every MPI call is made on the main thread of its rank (OpenMPI's communicator is not `Send`);
//! worker threads talk to it through channels. Messages are encoded with postcard; every byte
//! sent is counted for `bytes_sent_per_round`.
//!
//! Waiting: a rank that waits for a message (a command, an answer, a block, a broadcast) polls
//! for it and, after a short spin, sleeps between polls ([`until`]), rather than blocking in
//! MPI. MPICH's blocking calls spin on the core, so on a node with more ranks than cores a waiting
//! rank took the core from the one it waited for and every round cost a scheduler time slice (a
//! 44,000-round Lasso on 3 ranks and 2 cores ran for minutes instead of seconds).
//!
//! Failure: an error on any rank is returned to its caller, which must end the job with
//! [`Mpi::abort`] (MPI then stops every rank). A rank that dies is noticed by the MPI launcher,
//! which ends the job; no rank waits on a message from a dead one for longer than that.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use mpi::Rank;
use mpi::datatype::{Partition, PartitionMut};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use strads_core::checkpoint::{decode, encode};
use strads_core::{
    Aggregator, Assignment, BoxError, Checkpoints, EngineError, Launcher, Plan, Program, Round, RunOptions, Scheduler,
    Worker, WorkerId,
};
use strads_engine::{Transport, drive_checkpointed};

use crate::pool::Pool;
use crate::worker_loop::HOLD_COMMITS;

const COMMAND: i32 = 1;
const REPLY: i32 = 2;
const BLOCK: i32 = 3;
/// From this many ranks on, commands go by broadcast; below, a send to each rank is quicker.
const BROADCAST_FROM: usize = 4;
/// Bytes of the broadcast header of every command: its length, then the command itself if it fits.
const HEADER: usize = 256;

/// This process's place in an MPI job: the communicator and what it has sent.
pub struct Mpi {
    /// Kept for its drop, which finalizes MPI.
    _universe: Universe,
    world: SimpleCommunicator,
    bytes_sent: Cell<u64>,
    run_bytes: Cell<u64>,
    rounds: Cell<u64>,
}

/// The launcher of an MPI job: `threads` workers on every rank.
pub struct Ranks<'m> {
    mpi: &'m Mpi,
    threads: usize,
}

impl Mpi {
    /// Initializes MPI (once per process).
    pub fn init() -> Result<Mpi, EngineError> {
        let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
            .ok_or_else(|| EngineError::Transport("MPI was already initialized".into()))?;
        let world = universe.world();
        Ok(Mpi { _universe: universe, world, bytes_sent: Cell::new(0), run_bytes: Cell::new(0), rounds: Cell::new(0) })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    /// Number of ranks in the job.
    pub fn ranks(&self) -> usize {
        self.world.size() as usize
    }

    /// The launcher that runs `threads` workers on every rank (at least 1).
    pub fn launcher(&self, threads: usize) -> Result<Ranks<'_>, EngineError> {
        if threads == 0 {
            return Err(EngineError::Options("each rank needs at least one worker thread".into()));
        }
        Ok(Ranks { mpi: self, threads })
    }

    /// Bytes this rank has sent so far (runs and collectives).
    fn bytes_sent(&self) -> u64 {
        self.bytes_sent.get()
    }

    /// Bytes this rank has sent inside runs (the rounds, not the loading).
    pub fn run_bytes(&self) -> u64 {
        self.run_bytes.get()
    }

    /// Rounds the leader has pushed so far (0 on other ranks).
    pub fn rounds(&self) -> u64 {
        self.rounds.get()
    }

    /// Ends every rank of the job with `code`, after this rank has said why. The message is given
    /// a fifth of a second to reach the launcher first: MPICH's hydra kills the ranks' output
    /// forwarding at the abort, and the reason was sometimes lost.
    pub fn abort(&self, code: i32) -> ! {
        use std::io::Write;
        let _ = std::io::stderr().flush();
        thread::sleep(Duration::from_millis(200));
        self.world.abort(code)
    }

    fn count(&self, bytes: usize) {
        self.bytes_sent.set(self.bytes_sent.get() + bytes as u64);
    }

    fn send(&self, rank: usize, tag: i32, bytes: &[u8]) -> Result<(), EngineError> {
        mpi_count(bytes.len())?;
        self.count(bytes.len());
        self.world.process_at_rank(rank as Rank).send_with_tag(bytes, tag);
        Ok(())
    }

    fn receive(&self, rank: usize, tag: i32) -> Vec<u8> {
        let source = self.world.process_at_rank(rank as Rank);
        until(|| source.immediate_matched_probe_with_tag(tag)).matched_receive_vec::<u8>().0
    }

    /// `MPI_Bcast` from rank 0 into `buffer`, waited for by polling ([`until`]).
    fn broadcast(&self, buffer: &mut [u8]) {
        let root = self.world.process_at_rank(0);
        mpi::request::scope(|scope| complete(root.immediate_broadcast_into(scope, buffer)));
    }

    /// The leader's command to every other rank, by broadcast (a tree, not one send per rank): a
    /// fixed-size header carries the length, and short commands inline. Below [`BROADCAST_FROM`]
    /// ranks, one send per rank.
    fn command_to_all(&self, bytes: &[u8]) -> Result<(), EngineError> {
        if self.ranks() < BROADCAST_FROM {
            for rank in 1..self.ranks() {
                self.send(rank, COMMAND, bytes)?;
            }
            return Ok(());
        }
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        let inline = bytes.len() <= HEADER - 8;
        if inline {
            header[8..8 + bytes.len()].copy_from_slice(bytes);
        } else {
            mpi_count(bytes.len())?;
        }
        self.count(bytes.len() * (self.ranks() - 1));
        self.broadcast(&mut header[..]);
        if !inline {
            let mut payload = bytes.to_vec();
            self.broadcast(&mut payload[..]);
        }
        Ok(())
    }

    /// The leader's header saying that each rank's own command follows point to point.
    fn commands_follow(&self) {
        if self.ranks() < BROADCAST_FROM {
            return;
        }
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        self.broadcast(&mut header[..]);
    }

    /// A follower's next command from the leader (see [`Mpi::command_to_all`]).
    fn receive_command(&self) -> Vec<u8> {
        if self.ranks() < BROADCAST_FROM {
            return self.receive(0, COMMAND);
        }
        let mut header = [0u8; HEADER];
        self.broadcast(&mut header[..]);
        let mut length = [0u8; 8];
        length.copy_from_slice(&header[..8]);
        match u64::from_le_bytes(length) {
            u64::MAX => self.receive(0, COMMAND),
            n if n as usize <= HEADER - 8 => header[8..8 + n as usize].to_vec(),
            n => {
                let mut payload = vec![0u8; n as usize];
                self.broadcast(&mut payload[..]);
                payload
            }
        }
    }

    /// Sends `bytes` to rank `to` and receives from rank `from` at once (no ordering deadlock on a ring).
    fn send_receive(&self, to: usize, from: usize, bytes: &[u8]) -> Result<Vec<u8>, EngineError> {
        mpi_count(bytes.len())?;
        self.count(bytes.len());
        let world = &self.world;
        Ok(mpi::request::scope(|scope| {
            let request = world.process_at_rank(to as Rank).immediate_send_with_tag(scope, bytes, BLOCK);
            let incoming = self.receive(from, BLOCK);
            complete(request);
            incoming
        }))
    }

    /// Every rank's `value`, in rank order, on every rank.
    pub fn all_gather<T: Serialize + DeserializeOwned>(&self, value: &T) -> Result<Vec<T>, EngineError> {
        let bytes = encode(value).map_err(wire)?;
        let len = mpi_count(bytes.len())?;
        let mut counts = vec![0i32; self.ranks()];
        self.world.all_gather_into(&len, &mut counts[..]);
        let displs = displacements(&counts)?;
        let mut buffer = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
        self.count(bytes.len() * (self.ranks() - 1));
        {
            let mut partition = PartitionMut::new(&mut buffer[..], &counts[..], &displs[..]);
            self.world.all_gather_varcount_into(&bytes[..], &mut partition);
        }
        decode_parts(&buffer, &counts, &displs)
    }

    /// Sends `outgoing[r]` to rank `r` (every rank at once) and returns what each rank sent here, in rank order.
    ///
    /// Each part is encoded and dropped in turn, and each received part decoded from the receive
    /// buffer in place, so a large exchange holds about two copies of the data, not five.
    pub fn exchange<T: Serialize + DeserializeOwned>(&self, outgoing: Vec<T>) -> Result<Vec<T>, EngineError> {
        if outgoing.len() != self.ranks() {
            return Err(EngineError::Transport(format!("{} parts for {} ranks", outgoing.len(), self.ranks())));
        }
        let mut flat: Vec<u8> = Vec::new();
        let mut send_counts = Vec::with_capacity(self.ranks());
        for part in outgoing {
            let bytes = encode(&part).map_err(wire)?;
            drop(part);
            send_counts.push(mpi_count(bytes.len())?);
            flat.extend_from_slice(&bytes);
        }
        let send_displs = displacements(&send_counts)?;
        let mut receive_counts = vec![0i32; self.ranks()];
        self.world.all_to_all_into(&send_counts[..], &mut receive_counts[..]);
        let receive_displs = displacements(&receive_counts)?;
        let own = self.rank();
        self.count(send_counts.iter().enumerate().filter(|&(r, _)| r != own).map(|(_, &c)| c as usize).sum());
        let mut buffer = vec![0u8; receive_counts.iter().map(|&c| c as usize).sum()];
        {
            let send = Partition::new(&flat[..], &send_counts[..], &send_displs[..]);
            let mut receive = PartitionMut::new(&mut buffer[..], &receive_counts[..], &receive_displs[..]);
            self.world.all_to_all_varcount_into(&send, &mut receive);
        }
        drop(flat);
        decode_parts(&buffer, &receive_counts, &receive_displs)
    }

    /// The element-wise sum of every rank's `values`, on every rank.
    pub fn all_sum(&self, values: &mut [u64]) {
        let mine = values.to_vec();
        self.count(8 * values.len());
        self.world.all_reduce_into(&mine[..], values, mpi::collective::SystemOperation::sum());
    }

    /// The sum of every rank's `value`, on every rank.
    pub fn all_sum_one(&self, value: u64) -> u64 {
        let mut values = [value];
        self.all_sum(&mut values);
        values[0]
    }

    /// The largest of every rank's `value`, on every rank.
    pub fn all_max(&self, value: u64) -> u64 {
        let mut out = 0u64;
        self.count(8);
        self.world.all_reduce_into(&value, &mut out, mpi::collective::SystemOperation::max());
        out
    }
}

/// Polls `poll` until it gives a value: a few hundred tight polls (a reply that is on its way
/// comes within microseconds), then a yield of the core between polls, then sleeps of 50
/// microseconds, so that a rank that waits long leaves the core to the ranks that work.
fn until<T>(mut poll: impl FnMut() -> Option<T>) -> T {
    let mut idle = 0u32;
    loop {
        if let Some(value) = poll() {
            return value;
        }
        idle = idle.saturating_add(1);
        match idle {
            0..256 => std::hint::spin_loop(),
            256..1024 => thread::yield_now(),
            _ => thread::sleep(Duration::from_micros(50)),
        }
    }
}

/// Waits for a non-blocking operation by polling ([`until`]).
fn complete<'a, D: ?Sized, S: mpi::request::Scope<'a>>(request: mpi::request::Request<'a, D, S>) {
    let mut pending = Some(request);
    until(|| match pending.take().map(|r| r.test()) {
        Some(Ok(_)) | None => Some(()),
        Some(Err(again)) => {
            pending = Some(again);
            None
        }
    });
}

/// A length as MPI counts it (`i32`), or an error for a message above 2^31 bytes.
fn mpi_count(bytes: usize) -> Result<i32, EngineError> {
    i32::try_from(bytes)
        .map_err(|_| EngineError::Transport(format!("a message of {bytes} bytes is above MPI's 2^31-byte limit")))
}

/// Where each rank's part starts in a buffer of the parts one after another.
fn displacements(counts: &[i32]) -> Result<Vec<i32>, EngineError> {
    let mut displs = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &c in counts {
        displs.push(mpi_count(at)?);
        at += c as usize;
    }
    mpi_count(at)?;
    Ok(displs)
}

/// Decodes each rank's part of a buffer received from every rank.
fn decode_parts<T: DeserializeOwned>(buffer: &[u8], counts: &[i32], displs: &[i32]) -> Result<Vec<T>, EngineError> {
    counts.iter().zip(displs).map(|(&c, &d)| decode(&buffer[d as usize..(d + c) as usize]).map_err(wire)).collect()
}

/// An assignment as sent to one rank: the shared value, or that rank's workers' slice.
#[derive(Serialize)]
enum Sliced<'a, T> {
    All(&'a T),
    Each(&'a [T]),
}

#[derive(Serialize)]
enum Outgoing<'a, T, C> {
    Push(Round, Sliced<'a, T>, bool),
    Sync(Round, Sliced<'a, C>),
    Save,
    Restore(&'a [Vec<u8>]),
    Stop,
}

/// What a rank receives from the leader: the same shapes as [`Outgoing`], owned.
#[derive(Deserialize)]
enum Incoming<T, C> {
    Push(Round, Assignment<T>, bool),
    Sync(Round, Assignment<C>),
    Save,
    Restore(Vec<Vec<u8>>),
    Stop,
}

#[derive(Serialize, Deserialize)]
enum Answer<T> {
    Partials(Vec<T>),
    States(Vec<Vec<u8>>),
    Restored,
}

fn wire(error: impl std::fmt::Display) -> EngineError {
    EngineError::Transport(format!("message encoding: {error}"))
}

fn slice<T>(assignment: &Assignment<T>, range: std::ops::Range<usize>) -> Result<Sliced<'_, T>, EngineError> {
    match assignment {
        Assignment::All(value) => Ok(Sliced::All(value)),
        Assignment::Each(values) => values.get(range.clone()).map(Sliced::Each).ok_or_else(|| {
            EngineError::Transport(format!("an assignment of {} values for workers {range:?}", values.len()))
        }),
    }
}

impl Launcher for Ranks<'_> {
    fn workers(&self) -> usize {
        self.mpi.ranks() * self.threads
    }

    fn is_leader(&self) -> bool {
        self.mpi.rank() == 0
    }

    fn run_checkpointed<P, W, S, A>(
        &self,
        options: RunOptions,
        checkpoints: &mut dyn Checkpoints,
        make_worker: impl Fn(WorkerId) -> Result<W, BoxError> + Sync,
        make_leader: impl FnOnce() -> (S, A),
    ) -> Result<Option<(S, A)>, EngineError>
    where
        P: Program,
        W: Worker<P>,
        S: Scheduler<P>,
        A: Aggregator<P>,
    {
        let make_worker = &make_worker;
        let before = self.mpi.bytes_sent();
        let outcome = thread::scope(|scope| {
            let first = self.mpi.rank() * self.threads;
            let pool = Pool::<P, W>::start(scope, first, self.threads, make_worker)?;
            if !self.is_leader() {
                follow(self.mpi, pool)?;
                return Ok(None);
            }
            let mut transport = Leader {
                mpi: self.mpi,
                threads: self.threads,
                pool,
                pending: Vec::new(),
                leader_only: VecDeque::new(),
                holding: false,
                held: 0,
            };
            let (mut scheduler, mut aggregator) = make_leader();
            let outcome = drive_checkpointed(&mut scheduler, &mut aggregator, &mut transport, options, checkpoints);
            match outcome {
                // Every other rank waits for its next command: tell it to stop.
                Ok(_) | Err(EngineError::Interrupted { .. }) => transport.stop()?,
                // Ranks may be inside a rotation: the caller aborts the job.
                Err(_) => {}
            }
            outcome.map(|_| Some((scheduler, aggregator)))
        });
        self.mpi.run_bytes.set(self.mpi.run_bytes.get() + self.mpi.bytes_sent() - before);
        outcome
    }
}

/// The exchange of a rotation's boundary block: to the rank on the left, from the rank on the right.
fn exchange<P: Program>(mpi: &Mpi, block: P::Block) -> Result<P::Block, EngineError> {
    let ranks = mpi.ranks();
    if ranks == 1 {
        return Ok(block);
    }
    let rank = mpi.rank();
    let bytes = encode(&block).map_err(wire)?;
    let incoming = mpi.send_receive((rank + ranks - 1) % ranks, (rank + 1) % ranks, &bytes)?;
    decode(&incoming).map_err(wire)
}

/// A rank other than the leader: carry out the leader's commands until it says stop.
fn follow<P: Program, W: Worker<P>>(mpi: &Mpi, mut pool: Pool<P, W>) -> Result<(), EngineError> {
    loop {
        let message = mpi.receive_command();
        let mut rest = &message[..];
        while !rest.is_empty() {
            let (frame, after) = unframe(rest)?;
            rest = after;
            let command: Incoming<P::Task, P::Commit> = decode(frame).map_err(wire)?;
            let answer = match command {
                Incoming::Push(round, tasks, rotate) => {
                    pool.push(round, Arc::new(Plan { tasks, rotate, leader_only: false }), &mut |b| {
                        exchange::<P>(mpi, b)
                    })?;
                    Answer::Partials(pool.collect()?)
                }
                Incoming::Sync(round, commit) => {
                    pool.sync(round, Arc::new(commit))?;
                    continue;
                }
                Incoming::Save => Answer::States(pool.save()?),
                Incoming::Restore(states) => {
                    pool.restore(states)?;
                    Answer::Restored
                }
                Incoming::Stop => return Ok(()),
            };
            mpi.send(0, REPLY, &encode(&answer).map_err(wire)?)?;
        }
    }
}

/// Appends one command to a message as a frame: its length (4 bytes, little-endian), then itself.
fn frame(message: &mut Vec<u8>, command: &[u8]) -> Result<(), EngineError> {
    let length = u32::try_from(command.len())
        .map_err(|_| EngineError::Transport(format!("a command of {} bytes is above 4 GiB", command.len())))?;
    message.extend_from_slice(&length.to_le_bytes());
    message.extend_from_slice(command);
    Ok(())
}

/// The first frame of a message and the rest.
fn unframe(message: &[u8]) -> Result<(&[u8], &[u8]), EngineError> {
    let cut = || EngineError::Transport("a command message was cut short".into());
    let (length, rest) = message.split_first_chunk::<4>().ok_or_else(cut)?;
    let length = u32::from_le_bytes(*length) as usize;
    if rest.len() < length {
        return Err(cut());
    }
    Ok(rest.split_at(length))
}

/// The driver's transport on rank 0: its own workers in a pool, the others' through MPI.
struct Leader<'m, P: Program, W> {
    mpi: &'m Mpi,
    threads: usize,
    pool: Pool<P, W>,
    /// Framed commands for every rank not sent yet: a round's commit waits for the next push.
    pending: Vec<u8>,
    /// For every round pushed and not collected: whether it was worker 0's alone.
    leader_only: VecDeque<bool>,
    /// Whether the latest push was worker 0's alone: its commits wait in `pending` whatever their
    /// size (up to [`HOLD_COMMITS`] of them), since the other ranks have nothing else to do.
    holding: bool,
    /// Commits waiting in `pending`.
    held: usize,
}

impl<P: Program, W: Worker<P>> Leader<'_, P, W> {
    /// Sends every other rank a command, `message(workers)` for the rank's workers: the same bytes
    /// for all (`shared`, once, by broadcast), else each rank its own. A short shared command that
    /// needs no answer (`wait`) is kept and sent with the next one, so a small commit travels in the
    /// same broadcast as the next round's plan. With one rank nothing is encoded.
    fn command_ranks(
        &mut self,
        shared: bool,
        wait: bool,
        message: impl Fn(std::ops::Range<usize>) -> Result<Vec<u8>, EngineError>,
    ) -> Result<(), EngineError> {
        if self.mpi.ranks() == 1 {
            return Ok(());
        }
        if shared {
            frame(&mut self.pending, &message(0..0)?)?;
            self.held += usize::from(wait);
            // A large commit goes at once, so that the ranks apply it while the leader schedules,
            // unless they sit out the rounds for worker 0 alone.
            let hold = self.holding && self.held < HOLD_COMMITS;
            if !wait || (self.pending.len() > HEADER - 8 && !hold) {
                self.mpi.command_to_all(&self.pending)?;
                self.pending.clear();
                self.held = 0;
            }
            return Ok(());
        }
        if !self.pending.is_empty() {
            self.mpi.command_to_all(&self.pending)?;
            self.pending.clear();
            self.held = 0;
        }
        self.mpi.commands_follow();
        let threads = self.threads;
        for rank in 1..self.mpi.ranks() {
            let mut framed = Vec::new();
            frame(&mut framed, &message(rank * threads..(rank + 1) * threads)?)?;
            self.mpi.send(rank, COMMAND, &framed)?;
        }
        Ok(())
    }

    /// Every other rank's answer, in rank order, as `take` reads it (`None`: an answer out of turn).
    fn answers<T>(&self, take: impl Fn(Answer<P::Partial>) -> Option<T>) -> Result<Vec<T>, EngineError> {
        (1..self.mpi.ranks())
            .map(|rank| {
                let answer = decode(&self.mpi.receive(rank, REPLY)).map_err(wire)?;
                take(answer).ok_or_else(|| EngineError::Transport(format!("rank {rank} answered out of turn")))
            })
            .collect()
    }

    fn command_all(&mut self, command: Outgoing<'_, P::Task, P::Commit>) -> Result<(), EngineError> {
        self.command_ranks(true, false, |_| encode(&command).map_err(wire))
    }

    fn stop(&mut self) -> Result<(), EngineError> {
        self.command_all(Outgoing::Stop)
    }
}

impl<P: Program, W: Worker<P>> Transport<P> for Leader<'_, P, W> {
    fn workers(&self) -> usize {
        self.mpi.ranks() * self.threads
    }

    fn push(&mut self, round: Round, plan: Arc<Plan<P::Task>>) -> Result<(), EngineError> {
        self.mpi.rounds.set(self.mpi.rounds.get() + 1);
        self.leader_only.push_back(plan.leader_only);
        self.holding = plan.leader_only;
        if plan.leader_only {
            // Worker 0 is rank 0's first: the other ranks sit the round out.
            let mpi = self.mpi;
            return self.pool.push(round, plan, &mut |b| exchange::<P>(mpi, b));
        }
        let shared = matches!(plan.tasks, Assignment::All(_));
        self.command_ranks(shared, false, |range| {
            encode(&Outgoing::<P::Task, P::Commit>::Push(round, slice(&plan.tasks, range)?, plan.rotate)).map_err(wire)
        })?;
        let mpi = self.mpi;
        self.pool.push(round, plan, &mut |b| exchange::<P>(mpi, b))
    }

    fn collect(&mut self) -> Result<Vec<P::Partial>, EngineError> {
        let mut partials = self.pool.collect()?;
        if self.leader_only.pop_front().unwrap_or(false) {
            return Ok(partials);
        }
        let more = self.answers(|a| match a {
            Answer::Partials(p) => Some(p),
            _ => None,
        })?;
        partials.extend(more.into_iter().flatten());
        Ok(partials)
    }

    fn sync(&mut self, round: Round, commit: Arc<Assignment<P::Commit>>) -> Result<(), EngineError> {
        let shared = matches!(*commit, Assignment::All(_));
        self.command_ranks(shared, true, |range| {
            encode(&Outgoing::<P::Task, P::Commit>::Sync(round, slice(&commit, range)?)).map_err(wire)
        })?;
        // Rank 0's workers come first, so their local index is their worker id.
        self.pool.sync(round, commit)
    }

    fn save(&mut self) -> Result<Vec<Vec<u8>>, EngineError> {
        self.command_all(Outgoing::Save)?;
        let mut states = self.pool.save()?;
        let more = self.answers(|a| match a {
            Answer::States(s) => Some(s),
            _ => None,
        })?;
        states.extend(more.into_iter().flatten());
        Ok(states)
    }

    fn restore(&mut self, states: Vec<Vec<u8>>) -> Result<(), EngineError> {
        let threads = self.threads;
        if states.len() != self.workers() {
            return Err(EngineError::Checkpoint(format!(
                "the checkpoint has {} workers but this run has {}",
                states.len(),
                self.workers()
            )));
        }
        self.command_ranks(false, false, |range| {
            encode(&Outgoing::<P::Task, P::Commit>::Restore(&states[range])).map_err(wire)
        })?;
        self.pool.restore(states[..threads].to_vec())?;
        self.answers(|a| matches!(a, Answer::Restored).then_some(()))?;
        Ok(())
    }
}

impl strads_core::Collectives for Mpi {
    fn rank(&self) -> usize {
        Mpi::rank(self)
    }

    fn ranks(&self) -> usize {
        Mpi::ranks(self)
    }

    fn all_gather<T: Serialize + DeserializeOwned>(&self, value: &T) -> Result<Vec<T>, EngineError> {
        Mpi::all_gather(self, value)
    }

    fn exchange<T: Serialize + DeserializeOwned>(&self, outgoing: Vec<T>) -> Result<Vec<T>, EngineError> {
        Mpi::exchange(self, outgoing)
    }

    fn all_sum(&self, values: &mut [u64]) -> Result<(), EngineError> {
        Mpi::all_sum(self, values);
        Ok(())
    }

    fn all_max(&self, value: u64) -> Result<u64, EngineError> {
        Ok(Mpi::all_max(self, value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_hold_commands_in_order_and_a_cut_message_is_refused() {
        let mut message = Vec::new();
        for command in [&b"sync"[..], b"", b"push round 7"] {
            frame(&mut message, command).expect("frame");
        }
        let mut rest = &message[..];
        let mut seen = Vec::new();
        while !rest.is_empty() {
            let (command, after) = unframe(rest).expect("whole frames");
            seen.push(command.to_vec());
            rest = after;
        }
        assert_eq!(seen, vec![b"sync".to_vec(), Vec::new(), b"push round 7".to_vec()]);
        assert!(unframe(&message[..3]).is_err());
        assert!(unframe(&message[..7]).is_err());
    }
}
