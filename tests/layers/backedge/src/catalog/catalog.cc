#include "core/base.h"
#include "io/render.h"  // the undeclared edge: catalog uses core only
int Catalog() { return Render(); }
