#!/bin/sh
# convert-alloc.sh - routes raw allocation calls of the library through the allocator hook
# (dispatch/alloc.h): malloc( calloc( realloc( free( strdup( strndup( become cfx_malloc( ...
# Token-level only: nothing else on a line changes (other branches edit the same files, and
# re-running this after a merge converts their new call sites). String literals, character
# literals, comments and member calls (x->free(, x.free() are left alone.
#   scripts/convert-alloc.sh          convert the library's sources in place
#   scripts/convert-alloc.sh --check  list raw call sites, exit 1 if there is any
# A converted file that does not include dispatch/value.h (directly or not) needs
# #include "dispatch/alloc.h": the build says so (implicit declaration of cfx_malloc).
# Exempt: dispatch/alloc.c (the hook's default is libc) and a line marked `raw-alloc-ok`
# (a block from or for libc itself, e.g. realpath's result).
set -e
cd "$(dirname "$0")/.."
mode=convert
[ "${1-}" = --check ] && mode=check
files=$(find dispatch ir hop tracer codegen tools/cli -name '*.[ch]' ! -path dispatch/alloc.c | sort)
# shellcheck disable=SC2086
MODE=$mode perl -e '
    my $mode = $ENV{MODE}; my $bad = 0;
    for my $f (@ARGV) {
        open(my $in, "<", $f) or die "$f: $!";
        my @lines = <$in>; close $in;
        my ($changed, $incomment) = (0, 0);
        for my $i (0 .. $#lines) {
            my $line = $lines[$i];
            next if $line =~ /raw-alloc-ok/;
            # split into code and non-code (strings, chars, comments) pieces
            my $out = ""; my $rest = $line;
            while (length $rest) {
                if ($incomment) {
                    if ($rest =~ s{^(.*?\*/)}{}s) { $out .= $1; $incomment = 0; }
                    else { $out .= $rest; $rest = ""; }
                } elsif ($rest =~ s{^("(?:[^"\\]|\\.)*"|\x27(?:[^\x27\\]|\\.)*\x27|//.*)}{}s) {
                    $out .= $1;
                } elsif ($rest =~ s{^/\*}{}) {
                    $out .= "/*"; $incomment = 1;
                } elsif ($rest =~ s{^([^"\x27/]+|/)}{}) {
                    my $code = $1;
                    $code =~ s/(?<![\w.>])(malloc|calloc|realloc|free|strdup|strndup)(\s*\()/cfx_$1$2/g;
                    $out .= $code;
                } else { $out .= $rest; $rest = ""; }
            }
            if ($out ne $line) {
                if ($mode eq "check") { print "$f:", $i + 1, ": raw allocation call: $line"; $bad = 1; }
                else { $lines[$i] = $out; $changed = 1; }
            }
        }
        if ($changed) { open(my $o, ">", $f) or die; print $o @lines; close $o; print "converted $f\n"; }
    }
    exit $bad;
' $files
