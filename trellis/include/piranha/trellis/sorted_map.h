// SortedMap: the map of a trellis Value (Value::Map), string keys kept
// sorted in one contiguous array.
//
// Node states are small maps (a monitor's has eleven fields) built afresh,
// compared with the previous state and dropped at every tick, for every node
// of the pool: as a std::map each field was an allocation of its own and each
// comparison a walk of pointers. Here a map is one allocation, read by a
// binary search and compared by a linear scan. Keys come in byte order, as
// in std::map<std::string, V, std::less<>>, whose interface this follows for
// what the project uses: iteration, find/count/contains by string_view
// (find also with a position hint),
// operator[], at, insert_or_assign (with an end() hint that appends in
// constant time when keys come in order), try_emplace, emplace, erase.
//
// Unlike std::map, inserting or erasing moves the entries after it (O(n))
// and invalidates iterators and references to entries; build large maps in
// key order. Not thread-safe: one map is used by one thread at a time.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace piranha::trellis {

template <class V>
class SortedMap {
 public:
  using key_type = std::string;
  using mapped_type = V;
  using value_type = std::pair<std::string, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;
  using size_type = std::size_t;

  SortedMap() = default;
  // As std::map's: of equal keys the first is kept.
  SortedMap(std::initializer_list<value_type> items) {
    for (const auto& item : items) try_emplace(item.first, item.second);
  }

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  size_type size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }
  void reserve(size_type n) { items_.reserve(n); }

  iterator find(std::string_view key) {
    auto it = lower_bound(key);
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  const_iterator find(std::string_view key) const {
    auto it = lower_bound(key);
    return it != items_.end() && it->first == key ? it : items_.end();
  }
  // find(key), looking first at position `hint`: where a map built with the
  // same keys in the same order has `key`, or would insert it. There it
  // takes one comparison to find `key` and three to know it is missing,
  // rather than a binary search (a scheduler reads fields of thousands of
  // monitors' states, all built alike, at every tick). Any hint is correct,
  // a wrong one only slower.
  const_iterator find(std::string_view key, size_type hint) const {
    if (hint < items_.size()) {
      const std::string& here = items_[hint].first;
      if (here == key) return items_.begin() + static_cast<std::ptrdiff_t>(hint);
      if (key < here && (hint == 0 || items_[hint - 1].first < key)) return items_.end();
    } else if (hint == items_.size() && (hint == 0 || items_.back().first < key)) {
      return items_.end();
    }
    return find(key);
  }
  size_type count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
  bool contains(std::string_view key) const { return find(key) != end(); }
  // Throws std::out_of_range when `key` is missing.
  V& at(std::string_view key) {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("no key \"" + std::string(key) + "\"");
    return it->second;
  }
  const V& at(std::string_view key) const {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("no key \"" + std::string(key) + "\"");
    return it->second;
  }
  V& operator[](std::string_view key) { return try_emplace(std::string(key)).first->second; }

  template <class... Args>
  std::pair<iterator, bool> try_emplace(std::string key, Args&&... args) {
    auto it = lower_bound(key);
    if (it != items_.end() && it->first == key) return {it, false};
    return {place(it, std::move(key), std::forward<Args>(args)...), true};
  }
  template <class... Args>
  std::pair<iterator, bool> emplace(std::string key, Args&&... args) {
    return try_emplace(std::move(key), std::forward<Args>(args)...);
  }
  template <class M>
  std::pair<iterator, bool> insert_or_assign(std::string key, M&& value) {
    auto it = lower_bound(key);
    if (it == items_.end() || it->first != key)
      return {place(it, std::move(key), std::forward<M>(value)), true};
    it->second = std::forward<M>(value);
    return {it, false};
  }
  // With `hint` == end() and `key` after every key, an append.
  template <class M>
  iterator insert_or_assign(const_iterator hint, std::string key, M&& value) {
    if (hint == items_.end() && (items_.empty() || items_.back().first < key)) {
      return place(items_.end(), std::move(key), std::forward<M>(value));
    }
    return insert_or_assign(std::move(key), std::forward<M>(value)).first;
  }

  size_type erase(std::string_view key) {
    auto it = find(key);
    if (it == end()) return 0;
    items_.erase(it);
    return 1;
  }
  iterator erase(const_iterator at) { return items_.erase(at); }

  friend bool operator==(const SortedMap& a, const SortedMap& b) { return a.items_ == b.items_; }

 private:
  // Builds the entry in place at the end and rotates it to `at`.
  template <class... Args>
  iterator place(iterator at, std::string key, Args&&... args) {
    const auto index = at - items_.begin();
    items_.emplace_back(std::piecewise_construct, std::forward_as_tuple(std::move(key)),
                        std::forward_as_tuple(std::forward<Args>(args)...));
    std::rotate(items_.begin() + index, std::prev(items_.end()), items_.end());
    return items_.begin() + index;
  }

  iterator lower_bound(std::string_view key) {
    return std::lower_bound(items_.begin(), items_.end(), key,
                            [](const value_type& e, std::string_view k) { return e.first < k; });
  }
  const_iterator lower_bound(std::string_view key) const {
    return std::lower_bound(items_.begin(), items_.end(), key,
                            [](const value_type& e, std::string_view k) { return e.first < k; });
  }

  std::vector<value_type> items_;
};

}  // namespace piranha::trellis
