"""Where the time went in code: the Operators, Modules, Source and Roofline views, and the
breakdown tables, charts and Qt-free models they share."""
