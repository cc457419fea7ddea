// Placeholder: filled in by the issue 9 work.
#include <gtest/gtest.h>
