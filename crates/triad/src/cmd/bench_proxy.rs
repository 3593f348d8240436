//! `triad bench-proxy` (hidden): a TCP proxy that holds every byte for a set one-way delay
//! in each direction, so that a benchmark can put a real round-trip time between processes
//! on one machine. The kernel's own way (`tc qdisc … netem delay`) needs qdiscs that a
//! container's kernel may lack; `bench/cluster.sh` puts one of these in front of
//! PostgreSQL and of every node instead.
//!
//! Each accepted connection gets its own connection to the upstream and two directions.
//! A direction is a reader and a writer joined by a queue: the reader stamps each chunk it
//! reads with the instant it becomes due (now + delay) and queues it at once, so reading
//! never waits for the delay; the writer sends the chunks in the order read, each at its
//! due instant. So the bytes arrive intact and in order, the round trip grows by twice the
//! delay, and the throughput is what the sockets carry: any number of chunks is in flight
//! at once, up to [`QUEUED_CHUNKS_MAX`] per direction (4,096 reads of up to 64 KiB each,
//! far more than a delay of milliseconds holds at any rate a benchmark reaches).
//! A reader's end of stream is passed on as a half-close, after the delay too.
//!
//! tokio's timers tick in milliseconds, too coarse for a delay of 0.1 ms; on Linux the
//! writer waits on a `timerfd` instead, which wakes to the microsecond.

use std::{net::SocketAddr, time::Duration};

use anyhow::Context as _;
use clap::Args;
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{
        TcpListener, TcpStream,
        tcp::{OwnedReadHalf, OwnedWriteHalf},
    },
    sync::mpsc,
    time::Instant,
};

/// The most chunks queued in one direction before its reader waits for its writer.
pub(crate) const QUEUED_CHUNKS_MAX: usize = 4096;

/// The most bytes one read takes off a socket.
const CHUNK_BYTES_MAX: usize = 64 * 1024;

/// Forward TCP connections to an upstream, delaying each direction's bytes (a benchmark's
/// stand-in for a network's round-trip time).
#[derive(Debug, Args)]
pub(crate) struct ProxyArgs {
    /// Where to listen.
    #[arg(long)]
    listen: SocketAddr,
    /// Where to forward each connection.
    #[arg(long)]
    upstream: SocketAddr,
    /// The one-way delay added in each direction, in microseconds: the round-trip time
    /// grows by twice this.
    #[arg(long)]
    delay_us: u64,
}

pub(crate) fn run(args: ProxyArgs) -> anyhow::Result<()> {
    // One thread: the proxy shares the machine with what it measures.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        eprintln!(
            "triad bench-proxy: {} -> {}, {} us each way",
            args.listen, args.upstream, args.delay_us
        );
        serve(
            listener,
            args.upstream,
            Duration::from_micros(args.delay_us),
        )
        .await
    })
}

/// Accepts connections on `listener` for ever, relaying each to `upstream` with `delay`
/// each way. A connection that fails ends alone.
///
/// # Errors
/// When accepting fails for a reason other than the peer's.
pub(crate) async fn serve(
    listener: TcpListener,
    upstream: SocketAddr,
    delay: Duration,
) -> anyhow::Result<()> {
    loop {
        let (inbound, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            // The client gave up before we took it, or we are out of descriptors for a
            // moment: the next accept may work.
            Err(e) if is_transient(&e) => continue,
            Err(e) => return Err(e).context("cannot accept a connection"),
        };
        // A connection's failure (a reset, an upstream that refuses) is its peers' to see:
        // both its sockets close.
        tokio::spawn(async move { relay(inbound, upstream, delay).await });
    }
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionReset, Interrupted};
    matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted)
        || e.raw_os_error() == Some(24) // EMFILE
}

/// One connection: both directions until both have ended, or until either fails (which
/// drops both sockets, so the two peers see the failure).
async fn relay(inbound: TcpStream, upstream: SocketAddr, delay: Duration) -> std::io::Result<()> {
    let outbound = TcpStream::connect(upstream).await?;
    // A delayed chunk must leave when due, not wait for Nagle's acknowledgement.
    inbound.set_nodelay(true)?;
    outbound.set_nodelay(true)?;
    let (in_read, in_write) = inbound.into_split();
    let (out_read, out_write) = outbound.into_split();
    tokio::try_join!(
        direction(in_read, out_write, delay),
        direction(out_read, in_write, delay)
    )?;
    Ok(())
}

/// A chunk read, with the instant it is due at the other side; `None` is the end of the
/// stream.
type Due = (Instant, Option<Vec<u8>>);

/// Bytes from `from` to `to`, each chunk `delay` after it was read.
async fn direction(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    delay: Duration,
) -> std::io::Result<()> {
    let (queue, mut due) = mpsc::channel::<Due>(QUEUED_CHUNKS_MAX);
    let read = async move {
        let mut buf = vec![0u8; CHUNK_BYTES_MAX];
        loop {
            let n = from.read(&mut buf).await?;
            let at = Instant::now() + delay;
            let chunk = (n > 0).then(|| buf[..n].to_vec());
            // The writer is gone only when it failed, and its error is the one to report.
            if queue.send((at, chunk)).await.is_err() || n == 0 {
                return Ok::<_, std::io::Error>(());
            }
        }
    };
    let write = async move {
        let mut timer = Timer::new()?;
        while let Some((at, chunk)) = due.recv().await {
            timer.sleep_until(at).await?;
            match chunk {
                Some(bytes) => to.write_all(&bytes).await?,
                None => return to.shutdown().await,
            }
        }
        Ok(())
    };
    tokio::try_join!(read, write)?;
    Ok(())
}

/// A one-shot timer that wakes to the microsecond (a `timerfd`).
#[cfg(target_os = "linux")]
struct Timer(tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>);

#[cfg(target_os = "linux")]
impl Timer {
    fn new() -> std::io::Result<Timer> {
        use rustix::time::{TimerfdClockId, TimerfdFlags, timerfd_create};
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )?;
        // tokio deprecated this for descriptors the `AsyncFd` does not own (they could be
        // closed and reused under it); it owns this one, an `OwnedFd`. Its replacement,
        // `register_with_interest`, is `unsafe`, which this workspace denies.
        #[expect(deprecated, reason = "sound for an OwnedFd, see above")]
        let fd = tokio::io::unix::AsyncFd::with_interest(fd, tokio::io::Interest::READABLE)?;
        Ok(Timer(fd))
    }

    async fn sleep_until(&mut self, at: Instant) -> std::io::Result<()> {
        use rustix::time::{Itimerspec, TimerfdTimerFlags, Timespec, timerfd_settime};
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        let value = Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: left.subsec_nanos().into(),
        };
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        timerfd_settime(
            self.0.get_ref(),
            TimerfdTimerFlags::empty(),
            &Itimerspec {
                it_interval: zero,
                it_value: value,
            },
        )?;
        loop {
            let mut ready = self.0.readable().await?;
            let mut expirations = [0u8; 8];
            match rustix::io::read(ready.get_inner(), &mut expirations) {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::AGAIN) => ready.clear_ready(),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Elsewhere, tokio's timer: the delay is rounded up to the next millisecond.
#[cfg(not(target_os = "linux"))]
struct Timer;

#[cfg(not(target_os = "linux"))]
impl Timer {
    fn new() -> std::io::Result<Timer> {
        Ok(Timer)
    }

    async fn sleep_until(&mut self, at: Instant) -> std::io::Result<()> {
        tokio::time::sleep_until(at).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::{
        io::{AsyncReadExt as _, AsyncWriteExt as _},
        net::{TcpListener, TcpStream},
        time::Instant,
    };

    use super::serve;

    /// An echo server on 127.0.0.1: every connection gets its bytes back, then the end of
    /// its stream after its own.
    async fn echo() -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                socket.set_nodelay(true).unwrap();
                tokio::spawn(async move {
                    let (mut r, mut w) = socket.split();
                    tokio::io::copy(&mut r, &mut w).await.unwrap();
                    w.shutdown().await.unwrap();
                });
            }
        });
        addr
    }

    /// A proxy on 127.0.0.1 in front of `upstream`.
    async fn proxy(upstream: std::net::SocketAddr, delay: Duration) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, upstream, delay));
        addr
    }

    /// The round-trip times of `n` one-byte pings through `addr`, sorted.
    async fn pings(addr: std::net::SocketAddr, n: usize) -> Vec<Duration> {
        let mut socket = TcpStream::connect(addr).await.unwrap();
        socket.set_nodelay(true).unwrap();
        let mut rtts = Vec::new();
        for i in 0..n {
            let ping = [u8::try_from(i % 251).unwrap()];
            let sent = Instant::now();
            socket.write_all(&ping).await.unwrap();
            let mut pong = [0u8];
            socket.read_exact(&mut pong).await.unwrap();
            rtts.push(sent.elapsed());
            assert_eq!(pong, ping);
        }
        rtts.sort();
        rtts
    }

    #[tokio::test]
    async fn every_round_trip_grows_by_twice_the_delay() {
        let upstream = echo().await;
        for delay in [Duration::from_micros(100), Duration::from_millis(5)] {
            let via = proxy(upstream, delay).await;
            let rtts = pings(via, 30).await;
            // Never early: not one ping comes back before two delays.
            assert!(
                rtts[0] >= 2 * delay,
                "{delay:?} each way, fastest {:?}",
                rtts[0]
            );
            // Not much late either; loosely, since the machine may be busy.
            let median = rtts[rtts.len() / 2];
            assert!(
                median < 2 * delay + Duration::from_millis(20),
                "{delay:?} each way, median {median:?}"
            );
        }
    }

    #[tokio::test]
    async fn bytes_arrive_intact_in_order_and_without_waiting_for_each_other() {
        let upstream = echo().await;
        let delay = Duration::from_millis(20);
        let via = proxy(upstream, delay).await;
        // 200 writes of assorted sizes (4 MiB in all) of a sequence that is never periodic
        // within it, written at once: a proxy that held each write for the delay before
        // reading the next would take 200 delays (4 s).
        let mut state = 0x9e37_79b9_u32;
        let writes: Vec<Vec<u8>> = (0..200)
            .map(|i| {
                (0..(i * 397 % 40_000 + 1))
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 17;
                        state ^= state << 5;
                        state.to_le_bytes()[0]
                    })
                    .collect()
            })
            .collect();
        let sent: Vec<u8> = writes.concat();
        let socket = TcpStream::connect(via).await.unwrap();
        let (mut r, mut w) = socket.into_split();
        let started = Instant::now();
        let writer = tokio::spawn(async move {
            for chunk in writes {
                w.write_all(&chunk).await.unwrap();
            }
            // The half-close crosses the proxy, reaches the echo server, and its own end of
            // stream comes back: read_to_end below ends only then.
            w.shutdown().await.unwrap();
        });
        let mut received = Vec::new();
        r.read_to_end(&mut received).await.unwrap();
        let took = started.elapsed();
        writer.await.unwrap();
        assert_eq!(received.len(), sent.len());
        assert!(
            received == sent,
            "the bytes came back changed or out of order"
        );
        assert!(took >= 2 * delay, "came back in {took:?}, under two delays");
        assert!(
            took < 50 * delay,
            "took {took:?}: the proxy waited a delay per write"
        );
    }
}
