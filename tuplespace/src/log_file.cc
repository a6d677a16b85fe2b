#include "log_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace piranha::ts::log_file {

std::string errno_text() {
  return std::strerror(errno);
}

std::string read_all(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error(path + ": cannot stat: " + errno_text());
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    ssize_t n = ::pread(fd, data.data() + got, data.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(path + ": read at offset " + std::to_string(got) + " failed: " + errno_text());
    got += static_cast<std::size_t>(n);
  }
  return data;
}

void write_all(int fd, std::string_view data, const std::string& path, std::uint64_t offset) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error(path + ": write at offset " + std::to_string(offset) +
                               " failed: " + errno_text());
    data.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
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

void write_file(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot create: " + errno_text());
  try {
    write_all(fd, data, path, 0);
    sync_fd(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

}  // namespace piranha::ts::log_file
