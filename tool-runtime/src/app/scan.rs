//! The command line read before clap parses it: which subcommand it names and where the
//! application's global options are, so that only the invoked command's tree is built and
//! `configure` sees the global options first.

use std::ffi::OsString;

use clap::Arg;

/// Whether `args` start a server (`serve`, `mcp`) or an agent (`agent`, `chat`, whose tool calls
/// run in parallel), which get a multi-threaded runtime.
pub(super) fn is_server(args: &[OsString], globals: &[Arg]) -> bool {
    find_subcommand(args, globals).is_some_and(|(_, sub)| {
        matches!(
            sub.as_str(),
            "serve" | "mcp" | "agent" | "chat" | "toolsets"
        )
    })
}

/// The subcommand named on the command line, found before parsing so that only its flags are
/// built.
pub(super) fn find_subcommand(args: &[OsString], globals: &[Arg]) -> Option<(usize, String)> {
    let index = scan(args, globals).subcommand?;
    Some((index, args[index].to_str()?.to_owned()))
}

/// What [`scan`] finds on a command line before clap parses it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Scan {
    /// The index of the first word that is neither an option nor the value of a global one.
    pub(super) subcommand: Option<usize>,
    /// Each global option of the application, before or after the subcommand: its index and
    /// how many words it takes (2 for `--db x.db` and `-d x.db`, 1 for `--db=x.db`, `-dx.db`
    /// and a flag).
    pub(super) globals: Vec<(usize, usize)>,
}

/// Reads the application's global options (`--db x.db`, `--db=x.db`, `-d x.db`, `-dx.db`) and the
/// subcommand's place from `args` (the first is the program name), stopping at `--`. A global
/// option's value is never taken for the subcommand.
pub(super) fn scan(args: &[OsString], globals: &[Arg]) -> Scan {
    let mut found = Scan::default();
    let mut index = 1;
    while let Some(arg) = args.get(index) {
        let s = arg.to_str().unwrap_or_default();
        if s == "--" {
            break;
        }
        let (global, inline) = if let Some(long) = s.strip_prefix("--") {
            let (name, inline) = long
                .split_once('=')
                .map_or((long, false), |(n, _)| (n, true));
            (globals.iter().find(|g| g.get_long() == Some(name)), inline)
        } else if let Some(short) = s.strip_prefix('-').filter(|rest| !rest.is_empty()) {
            short_cluster(short, globals)
        } else {
            if found.subcommand.is_none() {
                found.subcommand = Some(index);
            }
            index += 1;
            continue;
        };
        let words = match global {
            Some(g) if !inline && g.get_action().takes_values() => 2.min(args.len() - index),
            _ => 1,
        };
        if global.is_some() {
            found.globals.push((index, words));
        }
        index += words;
    }
    found
}

/// The global option a cluster of short options (`-d`, `-dx.db`, `-vd`, `-vdx.db`) ends with,
/// and whether its value is inside the cluster: flags are passed over to the first option that
/// takes a value, whose value is the rest of the word or else the next word. A cluster with a
/// letter that is no global option is the subcommand's, one word.
fn short_cluster<'a>(short: &str, globals: &'a [Arg]) -> (Option<&'a Arg>, bool) {
    let mut last = None;
    for (i, c) in short.char_indices() {
        let Some(global) = globals.iter().find(|g| g.get_short() == Some(c)) else {
            return (None, true);
        };
        if global.get_action().takes_values() {
            return (Some(global), i + c.len_utf8() < short.len());
        }
        last = Some(global);
    }
    (last, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    /// `-d/--db PATH` and a `-v/--verbose` flag, as an application declares them.
    fn globals() -> [Arg; 2] {
        [
            Arg::new("db").long("db").short('d').num_args(1),
            Arg::new("verbose")
                .long("verbose")
                .short('v')
                .action(clap::ArgAction::SetTrue),
        ]
    }

    #[test]
    fn the_subcommand_is_found_past_global_options() {
        let globals = globals();
        for (line, at) in [
            (&["app", "--db", "x.db", "--json", "device-add"][..], 4),
            (&["app", "--db=x.db", "tools"], 2),
            (&["app", "-d", "x.db", "device-add", "--workspace", "w"], 3),
            (&["app", "-dx.db", "device-add"], 2),
            (&["app", "-d=x.db", "device-add"], 2),
            (&["app", "-v", "-d", "x.db", "-v", "device-add"], 5),
            (&["app", "-vd", "x.db", "device-add"], 3),
            (&["app", "-vdx.db", "device-add"], 2),
            (&["app", "-vv", "device-add"], 2),
            (&["app", "device-add", "-d", "x.db"], 1),
        ] {
            assert_eq!(
                find_subcommand(&args(line), &globals),
                Some((at, line[at].into())),
                "{line:?}"
            );
        }
        assert_eq!(find_subcommand(&args(&["app", "--help"]), &globals), None);
        assert_eq!(
            find_subcommand(&args(&["app", "-d", "x.db"]), &globals),
            None
        );
        assert_eq!(find_subcommand(&args(&["app", "-d"]), &globals), None);
        assert_eq!(
            find_subcommand(&args(&["app", "--", "tools"]), &globals),
            None
        );
    }

    #[test]
    fn global_options_are_read_in_every_form_before_and_after_the_subcommand() {
        let globals = globals();
        let line = args(&[
            "app",
            "-d",
            "a.db",
            "--db=b.db",
            "tool",
            "--text",
            "x",
            "-dc.db",
            "--db",
            "d.db",
            "-v",
            "--",
            "--db",
            "e.db",
        ]);
        assert_eq!(
            scan(&line, &globals),
            Scan {
                subcommand: Some(4),
                globals: vec![(1, 2), (3, 1), (7, 1), (8, 2), (10, 1)],
            }
        );
    }

    #[test]
    fn servers_get_the_multi_threaded_runtime() {
        let globals = globals();
        for line in [
            &["app", "--db", "serve", "serve"][..],
            &["app", "mcp"],
            &["app", "-d", "x.db", "serve"],
            &["app", "-dx.db", "serve"],
            &["app", "--db=x.db", "serve", "--addr", "127.0.0.1:0"],
            &["app", "--db", "x.db", "-v", "mcp"],
        ] {
            assert!(is_server(&args(line), &globals), "{line:?}");
        }
        for line in [
            &["app", "--db", "serve", "device-list"][..],
            &["app", "-d", "serve", "device-list"],
            &["app", "-d", "x.db", "device-list"],
            &["app", "tools"],
            &["app"],
        ] {
            assert!(!is_server(&args(line), &globals), "{line:?}");
        }
    }
}
