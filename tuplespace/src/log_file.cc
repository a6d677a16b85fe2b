#include "log_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "piranha/tuplespace/durable_log.h"

namespace piranha::ts::log_file {

std::string errno_text() {
  return std::strerror(errno);
}

std::uint64_t size_of(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(path + ": cannot stat: " + errno_text());
  return static_cast<std::uint64_t>(st.st_size);
}

std::size_t read_at(int fd, char* out, std::size_t n, std::uint64_t offset, const std::string& path) {
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0)
      throw std::runtime_error(path + ": read at offset " + std::to_string(offset + got) +
                               " failed: " + errno_text());
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

void write_at(int fd, std::string_view data, std::uint64_t offset, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == ENOSPC || errno == EDQUOT))
      throw LogFullError(path + ": write at offset " + std::to_string(offset) + " failed: " + errno_text());
    if (n < 0)
      throw std::runtime_error(path + ": write at offset " + std::to_string(offset) +
                               " failed: " + errno_text());
    data.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

void copy_range(int src, const std::string& src_path, std::uint64_t from, std::uint64_t to, int dst,
                const std::string& dst_path, std::uint64_t dst_offset) {
  std::vector<char> buf(std::min<std::uint64_t>(to - from, 4u << 20));
  while (from < to) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(to - from, buf.size()));
    std::size_t got = read_at(src, buf.data(), want, from, src_path);
    if (got < want)
      throw std::runtime_error(src_path + ": ends at offset " + std::to_string(from + got) +
                               " while copying up to " + std::to_string(to));
    write_at(dst, std::string_view(buf.data(), got), dst_offset, dst_path);
    from += got;
    dst_offset += got;
  }
}

void sync_fd(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) throw std::runtime_error(path + ": fdatasync failed: " + errno_text());
}

void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(dir + ": cannot open the directory to sync it: " + errno_text());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error(dir + ": fsync of the directory failed: " + errno_text());
}

void cut(int fd, const std::string& path, std::uint64_t offset) {
  if (::ftruncate(fd, static_cast<off_t>(offset)) != 0)
    throw std::runtime_error(path + ": cannot cut the file at offset " + std::to_string(offset) + ": " +
                             errno_text());
  sync_fd(fd, path);
}

int create(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot create: " + errno_text());
  return fd;
}

void rename_synced(const std::string& from, const std::string& to, const std::string& dir) {
  if (::rename(from.c_str(), to.c_str()) != 0)
    throw std::runtime_error(from + ": cannot rename to " + to + ": " + errno_text());
  sync_dir(dir);
}

}  // namespace piranha::ts::log_file
