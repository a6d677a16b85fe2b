# Fails unless README.md shows hello_job.cc whole, as it is.
#   cmake -DREADME=README.md -DSOURCE=hello_job.cc -P in_readme.cmake
file(READ ${README} readme)
file(READ ${SOURCE} source)
string(FIND "${readme}" "```cpp\n${source}```" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${README} does not show ${SOURCE} as it is: copy it into the README's \"Writing a Piranha job\"")
endif()
