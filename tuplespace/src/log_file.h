// The POSIX file operations of the durable log (internal). Each throws
// std::runtime_error naming the file, the offset where there is one, and the
// system's reason, so that a failure says which byte of which file it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace piranha::ts::log_file {

// strerror(errno): the reason of the call that failed last.
std::string errno_text();

// The file's size now.
std::uint64_t size_of(int fd, const std::string& path);

// Reads up to `n` bytes at `offset` into `out`, retrying short reads; fewer
// only at the end of the file. Returns the bytes read.
std::size_t read_at(int fd, char* out, std::size_t n, std::uint64_t offset, const std::string& path);

// Writes all of `data` at `offset` of the file (pwrite(2), retrying short
// writes). Throws LogFullError (durable_log.h) when the device has no room,
// with whatever part of `data` fitted written.
void write_at(int fd, std::string_view data, std::uint64_t offset, const std::string& path);

// Copies the bytes [from, to) of `src` to `dst` at `dst_offset`, in chunks.
void copy_range(int src, const std::string& src_path, std::uint64_t from, std::uint64_t to, int dst,
                const std::string& dst_path, std::uint64_t dst_offset);

// fdatasync(2) of the file.
void sync_fd(int fd, const std::string& path);

// fsync(2) of a directory, so that a file created or renamed in it survives a
// machine crash.
void sync_dir(const std::string& dir);

// Truncates the file at `offset` and syncs it.
void cut(int fd, const std::string& path, std::uint64_t offset);

// Creates (or empties) the file at `path` and returns it open for reading and
// writing; the caller closes it.
int create(const std::string& path);

// Renames `from` to `to` and syncs `dir`, which holds both.
void rename_synced(const std::string& from, const std::string& to, const std::string& dir);

}  // namespace piranha::ts::log_file
