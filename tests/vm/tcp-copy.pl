#!/usr/bin/perl
# An ordinary TCP program, for tests/vm/consumers.sh's rsockets case under librspreload.so:
#   tcp-copy.pl listen IP PORT OUT   accepts one connection, writes what it reads to OUT
#   tcp-copy.pl send IP PORT IN      connects, sends IN, closes
# Perl's sockets are plain socket(AF_INET, SOCK_STREAM, IPPROTO_TCP), which the preload library
# turns into rsockets (python's carry SOCK_CLOEXEC in the type, which it passes on to TCP).
use strict;
use warnings;
use IO::Socket::INET;

my ($mode, $ip, $port, $file) = @ARGV;
die "usage: tcp-copy.pl listen|send IP PORT FILE\n" unless defined $file;
if ($mode eq 'listen') {
	my $srv = IO::Socket::INET->new(LocalAddr => $ip, LocalPort => $port, Listen => 1, Proto => 'tcp')
		or die "listen: $!\n";
	my $c = $srv->accept or die "accept: $!\n";
	open(my $out, '>', $file) or die "$file: $!\n";
	binmode $out;
	my ($buf, $n);
	while (($n = sysread($c, $buf, 65536))) { print $out $buf or die "write: $!\n"; }
	die "read: $!\n" unless defined $n;
	close $out or die "close: $!\n";
} elsif ($mode eq 'send') {
	my $c = IO::Socket::INET->new(PeerAddr => $ip, PeerPort => $port, Proto => 'tcp') or die "connect: $!\n";
	open(my $in, '<', $file) or die "$file: $!\n";
	binmode $in;
	my ($buf, $n);
	while (($n = sysread($in, $buf, 65536))) {
		my $off = 0;
		while ($off < $n) {
			my $w = syswrite($c, $buf, $n - $off, $off);
			die "send: $!\n" unless defined $w;
			$off += $w;
		}
	}
	$c->shutdown(1);
	close $c;
} else {
	die "unknown mode $mode\n";
}
