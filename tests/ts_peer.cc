// ts_peer: a scripted tuple-space client process for the integration tests,
// so that tests can stop and kill a real client.
//
//   ts_peer ENDPOINT take SPACE LEASE_MS   takes ("task", ?int) under a lease, prints
//                                          "took N lease L", then waits to be killed
//   ts_peer ENDPOINT in SPACE              blocks in in("task", ?int), prints "got N"
//   ts_peer ENDPOINT rd SPACE              blocks in rd("task", ?int), prints "read N"
//   ts_peer ENDPOINT out SPACE N DELAY_MS  sleeps DELAY_MS, outs ("task", N), prints "wrote N"
//   ts_peer ENDPOINT complete SPACE LEASE_MS DELAY_MS posted|blocking
//                                          takes ("task", ?int) under a lease, prints
//                                          "took N lease L", sleeps DELAY_MS, completes
//                                          the lease writing ("result", N) to SPACE and
//                                          prints "posted N" (posted: not waiting for
//                                          the answer), "completed N" or "refused N";
//                                          then waits to be killed
//   ts_peer ENDPOINT take_many SPACE MAX LEASE_MS
//                                          takes up to MAX ("task", ?int) tuples, each
//                                          under a lease, prints "took K", then waits
//                                          to be killed
//   ts_peer ENDPOINT write SPACE FIRST COUNT
//                                          for N = FIRST .. FIRST+COUNT-1: outs ("n", N),
//                                          waits for the server's acknowledgement and
//                                          prints "wrote N"; when N is a multiple of 3
//                                          then takes ("n", N) back with inp and prints
//                                          "took N". Then waits to be killed
//
// Each line is flushed at once so a test can wait for it. Exit status: 0 when
// the script finished, 2 on a usage or tuple-space error. A peer nobody kills
// ends itself after two minutes, so a crashed test leaves no stray processes.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <string>
#include <thread>

#include "piranha/tuplespace/client.h"

namespace ts = piranha::ts;

namespace {

int usage() {
  std::cerr << "usage: ts_peer ENDPOINT take SPACE LEASE_MS | in SPACE | rd SPACE | out SPACE N DELAY_MS\n"
               "       | complete SPACE LEASE_MS DELAY_MS posted|blocking | take_many SPACE MAX LEASE_MS\n"
               "       | write SPACE FIRST COUNT\n";
  return 2;
}

int run(int argc, char** argv) {
  if (argc < 4) return usage();
  std::string endpoint = argv[1], command = argv[2], space_name = argv[3];
  ts::Client client(endpoint);
  ts::Space space = client.space(space_name);
  std::int64_t n = 0;
  if (command == "take" && argc == 5) {
    ts::Leased task = space.take(std::chrono::milliseconds(std::stoll(argv[4])), "task", ts::bind(n));
    std::cout << "took " << n << " lease " << task.lease << std::endl;
    while (true) ::pause();
  }
  if (command == "in" && argc == 4) {
    space.in("task", ts::bind(n));
    std::cout << "got " << n << std::endl;
    return 0;
  }
  if (command == "rd" && argc == 4) {
    space.rd("task", ts::bind(n));
    std::cout << "read " << n << std::endl;
    return 0;
  }
  if (command == "out" && argc == 6) {
    n = std::stoll(argv[4]);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoll(argv[5])));
    space.out_posted("task", n);
    std::cout << "wrote " << n << std::endl;
    return 0;
  }
  if (command == "complete" && argc == 7) {
    std::string mode = argv[6];
    if (mode != "posted" && mode != "blocking") return usage();
    ts::Leased task = space.take(std::chrono::milliseconds(std::stoll(argv[4])), "task", ts::bind(n));
    std::cout << "took " << n << " lease " << task.lease << std::endl;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stoll(argv[5])));
    if (mode == "posted") {
      space.complete_posted(task, ts::Tuple::of("result", n));
      std::cout << "posted " << n << std::endl;
    } else {
      bool done = space.complete(task, ts::Tuple::of("result", n));
      std::cout << (done ? "completed " : "refused ") << n << std::endl;
    }
    while (true) ::pause();
  }
  if (command == "write" && argc == 6) {
    std::int64_t first = std::stoll(argv[4]), count = std::stoll(argv[5]);
    for (n = first; n < first + count; ++n) {
      space.out("n", n);
      client.flush();
      std::cout << "wrote " << n << std::endl;
      if (n % 3 == 0 && space.inp("n", n)) std::cout << "took " << n << std::endl;
    }
    while (true) ::pause();
  }
  if (command == "take_many" && argc == 6) {
    auto tasks =
        space.take_many(static_cast<std::size_t>(std::stoll(argv[4])),
                        std::chrono::milliseconds(std::stoll(argv[5])), "task", ts::formal<std::int64_t>);
    std::cout << "took " << tasks.size() << std::endl;
    while (true) ::pause();
  }
  return usage();
}

}  // namespace

int main(int argc, char** argv) {
  ::alarm(120);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ts_peer: " << e.what() << "\n";
    return 2;
  }
}
