//! The command line's standard output. A reader that goes away early
//! (`mzk check … | head`) ends mzk the way it ends any Unix tool: by
//! SIGPIPE, quietly, instead of a panic and a backtrace.

use std::io::Write;

/// Writes to standard output; what `print!` would, without its panic.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_fmt(args) {
        closed(error);
    }
}

/// Writes and flushes (for output a reader waits for, such as run events).
pub fn write_now(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(error) = out.write_fmt(args).and_then(|()| out.flush()) {
        closed(error);
    }
}

/// Standard output failed: a closed pipe ends the process as SIGPIPE would
/// have, had Rust not ignored it; anything else is reported.
fn closed(error: std::io::Error) -> ! {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        #[cfg(unix)]
        // SAFETY: restoring the default action of a signal and raising it
        // touch no Rust state; the process ends here.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::raise(libc::SIGPIPE);
        }
        std::process::exit(141);
    }
    eprintln!("mzk: cannot write to standard output: {error}");
    std::process::exit(2);
}

/// `print!` for the command line (see [`write`]).
macro_rules! out {
    ($($arg:tt)*) => { $crate::cli::out::write(format_args!($($arg)*)) };
}

/// `println!` for the command line (see [`write`]).
macro_rules! outln {
    () => { $crate::cli::out::write(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::cli::out::write(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {out, outln};
