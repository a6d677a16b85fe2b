// BackgroundSync against real files: a sync runs on its own thread and is
// counted; a sync that fails is reported once through take_error().
#include "background_sync.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>

using piranha::ts::BackgroundSync;

TEST_CASE("a requested sync of a file runs and is counted, and nothing is reported") {
  char path[] = "/tmp/piranha-sync-XXXXXX";
  int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "record", 6) == 6);
  BackgroundSync sync;
  CHECK(sync.completed() == 0);
  sync.request(fd);
  sync.wait_idle();
  CHECK(sync.completed() == 1);
  sync.request(fd);
  sync.wait_idle();
  CHECK(sync.completed() == 2);
  CHECK(sync.take_error().empty());
  ::close(fd);
  std::remove(path);
}

TEST_CASE("a sync that fails is reported once, and later syncs still run") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);  // fdatasync of a pipe fails with EINVAL
  BackgroundSync sync;
  sync.request(pipe_fds[1]);
  sync.wait_idle();
  std::string error = sync.take_error();
  CHECK(error.find("fdatasync failed") != std::string::npos);
  CHECK(sync.take_error().empty());
  sync.request(pipe_fds[1]);
  sync.wait_idle();
  CHECK(sync.completed() == 2);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}
