# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""JVM options of the lab's Spark JVMs: the validation job's driver on the sandbox's MirrorMaker node, the tests' local
SparkContext and standalone cluster daemons.

The client compiler only and the serial collector: these JVMs live seconds to minutes on a 2-core machine that runs
several sandboxes at once, where the server compiler's threads cost about half of a job's JVM CPU time and pay off only
in long runs (measured on the demo's validation job: 9.2-10.5 CPU-s of JVM time without these options, 5.3-5.6 with
them, the same wall time on an idle machine). Tuning, not behaviour: the job computes the same; a real cluster keeps its
own JVM settings, and bench/ measures without these.
"""
SHORT_LIVED_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
