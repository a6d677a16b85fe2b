// The POSIX file operations of the durable log (internal). Each throws
// std::runtime_error naming the file, the offset where there is one, and the
// system's reason, so that a failure says which byte of which file it was.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace piranha::ts::log_file {

// strerror(errno): the reason of the call that failed last.
std::string errno_text();

// The whole file open on `fd`, read from offset 0 to its size at the call.
std::string read_all(int fd, const std::string& path);

// Writes all of `data` to `fd`, retrying short writes; `offset` is where it
// lands in the file, for the message.
void write_all(int fd, std::string_view data, const std::string& path, std::uint64_t offset);

// fdatasync(2) of the file.
void sync_fd(int fd, const std::string& path);

// fsync(2) of a directory, so that a file created or renamed in it survives a
// machine crash.
void sync_dir(const std::string& dir);

// Truncates the file at `offset` and syncs it.
void cut(int fd, const std::string& path, std::uint64_t offset);

// Creates (or empties) the file at `path`, writes `data` and syncs it.
void write_file(const std::string& path, std::string_view data);

}  // namespace piranha::ts::log_file
